// The hand-written SQL migrations and prisma/schema.prisma must describe the same database (
// docs/architecture.md#data): tables, columns (type, nullability, default), enums, indexes/uniques/primary keys and foreign
// keys, compared between Prisma's own parse of the schema and pg_catalog of the migrated test database.
// Also: the _prisma_migrations ledger, re-running migrate, and concurrent migrators.
import { createHash } from "node:crypto";
import { readdirSync, readFileSync, existsSync } from "node:fs";
import path from "node:path";
import pg from "pg";
import { afterAll, describe, expect, inject, test } from "vitest";
import { migrate, statementsOf } from "../lib/platform/db/migrate";
import { actualShape, diffShapes, expectedShape, type Shape } from "./schema-shape";

const ROOT = path.resolve(import.meta.dirname, "..");
const SCHEMA = readFileSync(path.join(ROOT, "prisma/schema.prisma"), "utf8");
const MIGRATIONS = path.join(ROOT, "prisma/migrations");
const testUrl = inject("databaseUrl");

function withDb(url: string, db: string): string {
  const u = new URL(url);
  u.pathname = `/${db}`;
  return u.toString();
}
const adminUrl = withDb(testUrl, "postgres");
const scratch: string[] = [];

async function admin<T>(fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: adminUrl });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}
async function scratchDb(label: string): Promise<string> {
  const name = `quiesce_drift_${label}_${process.pid}_${Date.now().toString(36)}`;
  await admin((c) => c.query(`CREATE DATABASE "${name}"`));
  scratch.push(name);
  return withDb(testUrl, name);
}
afterAll(async () => {
  await admin(async (c) => {
    for (const n of scratch) await c.query(`DROP DATABASE IF EXISTS "${n}" WITH (FORCE)`);
  });
});

let actualCache: Shape | undefined;
const actual = async () => (actualCache ??= await actualShape(testUrl));

test("schema.prisma and the migrated database agree on tables, columns, enums, indexes and foreign keys", async () => {
  const drift = diffShapes(expectedShape(SCHEMA), await actual());
  // On failure the lines say exactly what differs; fix the migration SQL or the schema, not this test.
  expect(drift).toEqual({ missingInDatabase: [], notInSchema: [] });
});

describe("the comparison detects drift (each edit below must show up)", () => {
  const edits: [string, string, string, (d: ReturnType<typeof diffShapes>) => void][] = [
    [
      "a new column",
      '  isDrill            Boolean  @default(false) @map("is_drill")\n',
      '  isDrill            Boolean  @default(false) @map("is_drill")\n  nickname String?\n',
      (d) => expect(d.missingInDatabase).toContain("column teams.nickname text null"),
    ],
    [
      "a nullability change",
      "  name               String\n  // A pause",
      "  name               String?\n  // A pause",
      (d) => {
        expect(d.missingInDatabase).toContain("column teams.name text null");
        expect(d.notInSchema).toContain("column teams.name text not null");
      },
    ],
    [
      "a changed default",
      '@default(2000) @map("quiet_period_ms")',
      '@default(3000) @map("quiet_period_ms")',
      (d) => expect(d.missingInDatabase).toContain("column teams.quiet_period_ms integer not null default=3000"),
    ],
    [
      "a type change",
      '  rollbackOwner      String?  @map("rollback_owner")',
      '  rollbackOwner      String?  @map("rollback_owner") @db.VarChar(80)',
      (d) => expect(d.missingInDatabase).toContain("column providers.rollback_owner character varying(80) null"),
    ],
    [
      "an Unsupported field's SQL type (Prisma's parser leaves the field out; the shape reads it from the text)",
      'Unsupported("quiesce_reservation[]")? @map("budget_reservations")',
      'Unsupported("jsonb")? @map("budget_reservations")',
      (d) => {
        expect(d.missingInDatabase).toContain("column operations.budget_reservations jsonb null");
        expect(d.notInSchema).toContain("column operations.budget_reservations quiesce_reservation[] null");
      },
    ],
    [
      "a new enum value",
      "  paused\n  killed\n}",
      "  paused\n  killed\n  zombie\n}",
      (d) => expect(d.missingInDatabase).toContain("enum Lifecycle [normal,paused,killed,zombie]"),
    ],
    [
      "a new index",
      '  @@map("teams")',
      '  @@index([name])\n  @@map("teams")',
      (d) => expect(d.missingInDatabase).toContain("index teams_name_idx teams(name)"),
    ],
    [
      "a dropped unique",
      "  slug               String   @unique\n",
      "  slug               String\n",
      (d) => expect(d.notInSchema).toContain("unique teams_slug_key teams(slug)"),
    ],
    [
      "a different delete rule",
      "team Team @relation(fields: [teamId], references: [id])\n  user User",
      "team Team @relation(fields: [teamId], references: [id], onDelete: Cascade)\n  user User",
      (d) =>
        expect(d.missingInDatabase).toContain(
          "fk memberships_team_id_fkey memberships(team_id) -> teams(id) on delete cascade on update cascade",
        ),
    ],
  ];
  for (const [what, from, to, check] of edits) {
    test(what, async () => {
      expect(SCHEMA.includes(from), `the edit for "${what}" no longer applies to schema.prisma; update the test`).toBe(true);
      check(diffShapes(expectedShape(SCHEMA.replace(from, to)), await actual()));
    });
  }

  test("a model that is gone from the schema (its table is extra in the database)", async () => {
    const start = SCHEMA.indexOf("model AuditEvent {");
    expect(start).toBeGreaterThan(0);
    const end = SCHEMA.indexOf("}\n", start) + 2;
    const d = diffShapes(expectedShape(SCHEMA.slice(0, start) + SCHEMA.slice(end)), await actual());
    expect(d.notInSchema).toContain("table audit_events");
  });

  test("an index added in the database but not in the schema", async () => {
    const url = await scratchDb("extra");
    await migrate(url);
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    await c.query(`CREATE INDEX "teams_name_extra_idx" ON "teams"("name")`);
    await c.end();
    const d = diffShapes(expectedShape(SCHEMA), await actualShape(url));
    expect(d).toEqual({ missingInDatabase: [], notInSchema: ["index teams_name_extra_idx teams(name)"] });
  });
});

function migrationFolders(): { name: string; checksum: string }[] {
  return readdirSync(MIGRATIONS, { withFileTypes: true })
    .filter((d) => d.isDirectory() && existsSync(path.join(MIGRATIONS, d.name, "migration.sql")))
    .map((d) => ({
      name: d.name,
      checksum: createHash("sha256")
        .update(statementsOf(readFileSync(path.join(MIGRATIONS, d.name, "migration.sql"), "utf8")))
        .digest("hex"),
    }))
    .sort((a, b) => a.name.localeCompare(b.name));
}

async function ledger(url: string) {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (
      await c.query(`SELECT migration_name AS name, checksum, finished_at IS NOT NULL AS finished, rolled_back_at IS NULL AS live,
        applied_steps_count AS steps FROM "_prisma_migrations" ORDER BY migration_name`)
    ).rows;
  } finally {
    await c.end();
  }
}

test("the _prisma_migrations ledger records every migration folder once, finished, with the sha256 of its statements", async () => {
  const rows = await ledger(testUrl);
  expect(rows).toEqual(migrationFolders().map((m) => ({ ...m, finished: true, live: true, steps: 1 })));
});

test("migrate on an up-to-date database applies nothing and changes nothing", async () => {
  const url = await scratchDb("twice");
  const first = await migrate(url);
  expect(first.applied).toEqual(migrationFolders().map((m) => m.name));
  const [ledgerBefore, shapeBefore] = [await ledger(url), await actualShape(url)];
  const second = await migrate(url);
  expect(second).toEqual({ applied: [], alreadyApplied: first.applied.length });
  expect(await ledger(url)).toEqual(ledgerBefore);
  expect(await actualShape(url)).toEqual(shapeBefore);
});

test("concurrent migrators on a fresh database serialize: every migration applied exactly once, none fails", async () => {
  const url = await scratchDb("race");
  const results = await Promise.all([migrate(url), migrate(url), migrate(url), migrate(url)]);
  const applied = results.flatMap((r) => r.applied).sort();
  expect(applied).toEqual(migrationFolders().map((m) => m.name));
  // One migrator did all the work; the others waited on the advisory lock and found nothing left.
  expect(results.filter((r) => r.applied.length > 0)).toHaveLength(1);
  expect((await ledger(url)).map((r) => r.name)).toEqual(migrationFolders().map((m) => m.name));
  expect(diffShapes(expectedShape(SCHEMA), await actualShape(url))).toEqual({ missingInDatabase: [], notInSchema: [] });
});
