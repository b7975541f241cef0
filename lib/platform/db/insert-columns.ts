// The raw-SQL inserts of the hot paths (run registration: lib/modules/runs/register/insert.ts insertRegistration) bypass
// Prisma, so nothing would tell them that schema.prisma gained a column. Each is written as ONE record
// naming every scalar field of its model — typed against the generated client, so a field added to
// the schema and not to the record is a type error — from which the column list and the value list
// are both derived. A field the insert leaves to its column default says "DEFAULT".
import "server-only";
import type { Prisma } from "../../generated/prisma/client";

export type RunField = Prisma.RunScalarFieldEnum;
export type LeaseField = Prisma.LeaseScalarFieldEnum;

/** The column of a field: the schema maps every field of these models to its snake_case name (test/insert-columns.test.ts). */
export function columnOf(field: string): string {
  return field.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}

/** `col, …` and `expr, …` for an INSERT, in the same order, without the fields left to their default. */
export function insertColumns<F extends string>(spec: Record<F, string>): { columns: string; values: string } {
  const given = (Object.entries(spec) as [string, string][]).filter(([, expr]) => expr !== "DEFAULT");
  return { columns: given.map(([f]) => columnOf(f)).join(", "), values: given.map(([, e]) => e).join(", ") };
}
