// The raw registration insert derives its column names from the generated client's field names
// (lib/platform/db/insert-columns.ts): this checks that derivation against schema.prisma, field by
// field, for the models it inserts into. The schema-drift test then ties schema.prisma to the database.
import { readFileSync } from "node:fs";
import path from "node:path";
import { expect, test } from "vitest";
import { Prisma } from "../lib/generated/prisma/client";
import { columnOf, insertColumns } from "../lib/platform/db/insert-columns";

const SCHEMA = readFileSync(path.resolve(import.meta.dirname, "../prisma/schema.prisma"), "utf8");

/** field → column of a model's scalar fields, from schema.prisma (a field's @map, else its name). */
function scalarColumns(model: string): Record<string, string> {
  const body = new RegExp(`^model ${model} \\{([\\s\\S]*?)^\\}`, "m").exec(SCHEMA)?.[1];
  if (!body) throw new Error(`model ${model} not in schema.prisma`);
  const models = new Set([...SCHEMA.matchAll(/^model (\w+) \{/gm)].map((m) => m[1]!));
  const out: Record<string, string> = {};
  for (const line of body.split("\n")) {
    const m = /^\s*(\w+)\s+(\w+)(\[\])?\??(.*)$/.exec(line);
    if (!m || line.trim().startsWith("//") || line.trim().startsWith("@@")) continue;
    const [, field, type, , rest] = m;
    if (models.has(type!)) continue; // a relation
    out[field!] = /@map\("([^"]+)"\)/.exec(rest!)?.[1] ?? field!;
  }
  return out;
}

test.each([
  ["Run", Prisma.RunScalarFieldEnum],
  ["Lease", Prisma.LeaseScalarFieldEnum],
] as const)("%s: every scalar field's column is the one the raw insert derives", (model, fields) => {
  const columns = scalarColumns(model);
  expect(Object.keys(columns).sort()).toEqual(Object.keys(fields).sort());
  for (const [field, column] of Object.entries(columns)) expect(columnOf(field), field).toBe(column);
});

test("fields left to their default are not listed; the lists stay in step", () => {
  expect(insertColumns({ id: "$1", teamId: "$2", createdAt: "DEFAULT", parentRunId: "NULL" })).toEqual({
    columns: "id, team_id, parent_run_id",
    values: "$1, $2, NULL",
  });
});
