// The migrator's checksum covers a migration's statements, not its comments
// (docs/design/migration-checksums.md): a database whose ledger holds the whole-file checksums of
// before the comment edits migrates without a warning, and a changed statement still warns.
import { createHash } from "node:crypto";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, test } from "vitest";
import { LEGACY_CHECKSUMS_FILE, MIGRATIONS_DIR, migrate, readMigrations, sameMigration, statementsOf } from "../lib/platform/db/migrate";

const testUrl = inject("databaseUrl");
const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");
const legacy = JSON.parse(readFileSync(path.join(MIGRATIONS_DIR, LEGACY_CHECKSUMS_FILE), "utf8")) as Record<
  string,
  { file: string; statements: string }
>;

function withDb(url: string, db: string): string {
  const u = new URL(url);
  u.pathname = `/${db}`;
  return u.toString();
}

async function query(url: string, sql: string, params: unknown[] = []) {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query(sql, params)).rows;
  } finally {
    await c.end();
  }
}

describe("statementsOf", () => {
  test("drops whole-line comments and blank lines, keeps everything else verbatim", () => {
    const sql = "-- header\n\nCREATE TABLE t (a int); -- trailing stays\r\n  -- indented\nSELECT '--not a comment';\n";
    expect(statementsOf(sql)).toBe("CREATE TABLE t (a int); -- trailing stays\nSELECT '--not a comment';");
  });

  test("a legacy file checksum counts only while the statements are the ones it was recorded with", () => {
    const [name, old] = Object.entries(legacy)[0]!;
    const m = readMigrations().find((x) => x.name === name)!;
    expect(sameMigration(old.file, m, legacy)).toBe(true);
    const changed = { ...m, checksum: sha256(statementsOf(m.sql + "\nSELECT 1;")), fileChecksum: sha256(m.sql + "\nSELECT 1;") };
    expect(sameMigration(old.file, changed, legacy)).toBe(false);
    expect(sameMigration(m.checksum, changed, legacy)).toBe(false);
  });
});

describe("a database migrated before checksums skipped comments", () => {
  const db = `quiesce_checksums_${process.pid}_${Date.now().toString(36)}`;
  const url = withDb(testUrl, db);
  const dir = mkdtempSync(path.join(tmpdir(), "quiesce-migrations-"));
  const warnings = async () => {
    const lines: string[] = [];
    const result = await migrate(url, (l) => lines.push(l), dir);
    expect(result.applied).toEqual([]);
    return lines.filter((l) => l.startsWith("warning:"));
  };
  const edit = (name: string, fn: (sql: string) => string) => {
    const f = path.join(dir, name, "migration.sql");
    writeFileSync(f, fn(readFileSync(f, "utf8")));
  };

  beforeAll(async () => {
    cpSync(MIGRATIONS_DIR, dir, { recursive: true });
    await query(withDb(testUrl, "postgres"), `CREATE DATABASE "${db}"`);
    await migrate(url, () => {}, dir);
    // The ledger as an existing database holds it: every row the whole-file sha256 of its day.
    for (const m of readMigrations(dir)) {
      await query(url, `UPDATE "_prisma_migrations" SET checksum = $2 WHERE migration_name = $1`, [
        m.name,
        legacy[m.name]?.file ?? m.fileChecksum,
      ]);
    }
  });
  afterAll(async () => {
    await query(withDb(testUrl, "postgres"), `DROP DATABASE IF EXISTS "${db}" WITH (FORCE)`);
    rmSync(dir, { recursive: true, force: true });
  });

  test("the ledger holds old checksums that differ from the statements' ones", async () => {
    expect(Object.keys(legacy).length).toBeGreaterThan(0);
    const rows = await query(url, `SELECT migration_name, checksum FROM "_prisma_migrations"`);
    const byName = new Map(rows.map((r) => [r.migration_name as string, r.checksum as string]));
    for (const m of readMigrations(dir)) expect(byName.get(m.name)).not.toBe(m.checksum);
  });

  test("migrates without a warning", async () => {
    expect(await warnings()).toEqual([]);
  });

  test("a comment or a blank line edited again: still no warning", async () => {
    const name = Object.keys(legacy)[0]!;
    edit(name, (sql) => `-- another note\n\n${sql}\n-- at the end\n`);
    expect(await warnings()).toEqual([]);
  });

  test("a changed statement warns, in a migration with a legacy checksum and in one without", async () => {
    const names = readMigrations(dir).map((m) => m.name);
    const withLegacy = Object.keys(legacy).at(-1)!;
    const without = names.find((n) => !(n in legacy))!;
    for (const n of [withLegacy, without]) edit(n, (sql) => `${sql}\nSELECT 1;\n`);
    expect(await warnings()).toEqual(
      [withLegacy, without].sort().map((n) => `warning: ${n} was edited after it was applied (checksum differs)`),
    );
  });
});
