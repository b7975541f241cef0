// The project's migrate command. Prisma's schema engine cannot be downloaded here, so SQL files in
// prisma/migrations/<ts>_<name>/migration.sql are applied in name order under an advisory lock, and
// recorded in a `_prisma_migrations` ledger with Prisma's own columns and checksum (sha256 of the
// file), so `prisma migrate status` on a machine that has the engine reads the same history.
import { createHash, randomUUID } from "node:crypto";
import { readdirSync, readFileSync, existsSync } from "node:fs";
import path from "node:path";
import { newClient } from "./hosts";

const LOCK_KEY = 727_274_001; // arbitrary, constant: serializes concurrent migrators
export const MIGRATIONS_DIR = path.resolve(import.meta.dirname, "../../prisma/migrations");

export interface MigrationFile {
  name: string;
  sql: string;
  checksum: string;
}

export function readMigrations(dir = MIGRATIONS_DIR): MigrationFile[] {
  return readdirSync(dir, { withFileTypes: true })
    .filter((d) => d.isDirectory() && existsSync(path.join(dir, d.name, "migration.sql")))
    .map((d) => d.name)
    .sort()
    .map((name) => {
      const sql = readFileSync(path.join(dir, name, "migration.sql"), "utf8");
      return { name, sql, checksum: createHash("sha256").update(sql).digest("hex") };
    });
}

export interface MigrateResult {
  applied: string[];
  alreadyApplied: number;
}

export async function migrate(databaseUrl: string, log: (line: string) => void = () => {}): Promise<MigrateResult> {
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
    for (const m of readMigrations()) {
      const prior = ledger.get(m.name);
      if (prior?.finished_at) {
        if (prior.checksum !== m.checksum) log(`warning: ${m.name} was edited after it was applied (checksum differs)`);
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
