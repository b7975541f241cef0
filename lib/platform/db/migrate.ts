// The project's migrate command. Prisma's schema engine cannot be downloaded here, so SQL files in
// prisma/migrations/<ts>_<name>/migration.sql are applied in name order under an advisory lock, and
// recorded in a `_prisma_migrations` ledger with Prisma's own columns, so `prisma migrate status` on a
// machine that has the engine reads the same history. The checksum covers the statements, not the
// comments: docs/design/migration-checksums.md.
import { createHash, randomUUID } from "node:crypto";
import { readdirSync, readFileSync, existsSync } from "node:fs";
import path from "node:path";
import { newClient } from "./hosts";

const LOCK_KEY = 727_274_001; // arbitrary, constant: serializes concurrent migrators
export const MIGRATIONS_DIR = path.resolve(import.meta.dirname, "../../../prisma/migrations");

/** Checksums recorded before a migration's comments were edited: the file's and its statements'. */
export const LEGACY_CHECKSUMS_FILE = "legacy-checksums.json";

export interface MigrationFile {
  name: string;
  sql: string;
  /** sha256 of the statements: the file without whole-line `--` comments and blank lines. */
  checksum: string;
  /** sha256 of the whole file, as the ledger recorded it before checksums skipped comments. */
  fileChecksum: string;
}

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

/** The file's lines without whole-line `--` comments and blank lines (a comment after a statement stays). */
export function statementsOf(sql: string): string {
  return sql
    .split("\n")
    .map((line) => line.replace(/\r$/, ""))
    .filter((line) => !/^\s*(--.*)?$/.test(line))
    .join("\n");
}

export function readMigrations(dir = MIGRATIONS_DIR): MigrationFile[] {
  return readdirSync(dir, { withFileTypes: true })
    .filter((d) => d.isDirectory() && existsSync(path.join(dir, d.name, "migration.sql")))
    .map((d) => d.name)
    .sort()
    .map((name) => {
      const sql = readFileSync(path.join(dir, name, "migration.sql"), "utf8");
      return { name, sql, checksum: sha256(statementsOf(sql)), fileChecksum: sha256(sql) };
    });
}

type LegacyChecksums = Record<string, { file: string; statements: string }>;

function readLegacyChecksums(dir: string): LegacyChecksums {
  const file = path.join(dir, LEGACY_CHECKSUMS_FILE);
  return existsSync(file) ? (JSON.parse(readFileSync(file, "utf8")) as LegacyChecksums) : {};
}

/**
 * Whether a ledger row's checksum is the migration as it stands: the statements' checksum, the whole
 * file's (a row written before checksums skipped comments), or a file checksum from before a comment
 * edit — accepted only while the statements are still the ones it was recorded with.
 */
export function sameMigration(recorded: string, m: MigrationFile, legacy: LegacyChecksums = {}): boolean {
  if (recorded === m.checksum || recorded === m.fileChecksum) return true;
  const old = legacy[m.name];
  return old !== undefined && old.file === recorded && old.statements === m.checksum;
}

export interface MigrateResult {
  applied: string[];
  alreadyApplied: number;
}

export async function migrate(databaseUrl: string, log: (line: string) => void = () => {}, dir = MIGRATIONS_DIR): Promise<MigrateResult> {
  // A session of its own (the migration lock is a session lock): never through a transaction pooler.
  // A multi-host string migrates the primary (lib/platform/db/hosts.ts).
  const client = newClient(databaseUrl);
  await client.connect();
  try {
    await client.query("SELECT pg_advisory_lock($1)", [LOCK_KEY]);
    await client.query(`CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
      "id" VARCHAR(36) PRIMARY KEY NOT NULL,
      "checksum" VARCHAR(64) NOT NULL,
      "finished_at" TIMESTAMPTZ,
      "migration_name" VARCHAR(255) NOT NULL,
      "logs" TEXT,
      "rolled_back_at" TIMESTAMPTZ,
      "started_at" TIMESTAMPTZ NOT NULL DEFAULT now(),
      "applied_steps_count" INTEGER NOT NULL DEFAULT 0)`);
    const done = await client.query<{ migration_name: string; checksum: string; finished_at: Date | null }>(
      `SELECT migration_name, checksum, finished_at FROM "_prisma_migrations" WHERE rolled_back_at IS NULL`,
    );
    const ledger = new Map(done.rows.map((r) => [r.migration_name, r]));
    const applied: string[] = [];
    const legacy = readLegacyChecksums(dir);
    for (const m of readMigrations(dir)) {
      const prior = ledger.get(m.name);
      if (prior?.finished_at) {
        if (!sameMigration(prior.checksum, m, legacy)) log(`warning: ${m.name} was edited after it was applied (checksum differs)`);
        continue;
      }
      if (prior) throw new Error(`migration ${m.name} started earlier but never finished; inspect the database, then mark it rolled back`);
      const id = randomUUID();
      await client.query("BEGIN");
      try {
        await client.query(`INSERT INTO "_prisma_migrations" (id, checksum, migration_name, started_at) VALUES ($1, $2, $3, now())`, [
          id,
          m.checksum,
          m.name,
        ]);
        await client.query(m.sql);
        await client.query(`UPDATE "_prisma_migrations" SET finished_at = now(), applied_steps_count = 1 WHERE id = $1`, [id]);
        await client.query("COMMIT");
      } catch (err) {
        await client.query("ROLLBACK");
        throw new Error(`migration ${m.name} failed: ${(err as Error).message}`);
      }
      applied.push(m.name);
      log(`applied ${m.name}`);
    }
    return { applied, alreadyApplied: ledger.size };
  } finally {
    await client.query("SELECT pg_advisory_unlock($1)", [LOCK_KEY]).catch(() => {});
    await client.end();
  }
}
