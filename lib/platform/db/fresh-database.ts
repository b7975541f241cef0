// A fresh, migrated database of its own for one test run, bench run, eval run or e2e run: created on
// TEST_DATABASE_URL's server (else DATABASE_URL's), or on an embedded PostgreSQL with its own data
// folder and port when neither is set, and dropped afterwards. Nothing shared is ever touched.
import pg from "pg";
import { migrate } from "./migrate";
import { startEmbeddedPostgres, type EmbeddedHandle } from "./embedded";
import { setting } from "../config";

export interface FreshDatabase {
  url: string;
  name: string;
  /** Where it lives, for reports: "PostgreSQL at host:port (TEST_DATABASE_URL)" or "embedded …". */
  server: string;
  drop(): Promise<void>;
}

export interface FreshDatabaseOptions {
  /** Database name prefix, e.g. "quiesce_test". */
  prefix: string;
  /** Embedded fallback: data folder and port (each kind of run has its own, so they never collide). */
  embedded: { dataDir: string; port: number };
  /** Read only DATABASE_URL (not TEST_DATABASE_URL): the bench measures the server the app uses. */
  databaseUrlOnly?: boolean;
  log?: (line: string) => void;
}

export function withDatabase(url: string, db: string): string {
  const u = new URL(url);
  u.pathname = `/${db}`;
  return u.toString();
}

async function adminQuery(adminUrl: string, sql: string): Promise<void> {
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(sql);
  } finally {
    await admin.end();
  }
}

export async function freshDatabase(opts: FreshDatabaseOptions): Promise<FreshDatabase> {
  const log = opts.log ?? (() => {});
  const name = `${opts.prefix}_${process.pid}_${Date.now().toString(36)}`;
  const envName =
    !opts.databaseUrlOnly && setting("TEST_DATABASE_URL") ? "TEST_DATABASE_URL" : setting("DATABASE_URL") ? "DATABASE_URL" : null;
  let embedded: EmbeddedHandle | undefined;
  let adminUrl: string;
  let server: string;
  if (envName) {
    adminUrl = setting(envName)!;
    const u = new URL(adminUrl);
    server = `PostgreSQL at ${u.hostname}:${u.port || 5432} (${envName})`;
  } else {
    log(
      `no ${opts.databaseUrlOnly ? "DATABASE_URL" : "TEST_DATABASE_URL / DATABASE_URL"}: using an embedded PostgreSQL (${opts.embedded.dataDir})`,
    );
    embedded = await startEmbeddedPostgres(opts.embedded);
    adminUrl = embedded.adminUrl("postgres");
    server = `embedded PostgreSQL (${opts.embedded.dataDir}, port ${opts.embedded.port})`;
  }
  await adminQuery(adminUrl, `CREATE DATABASE "${name}"`);
  const url = withDatabase(adminUrl, name);
  await migrate(url);
  log(`fresh database ${name} on ${server}`);
  return {
    url,
    name,
    server,
    drop: async () => {
      await adminQuery(adminUrl, `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`).catch((e: Error) =>
        log(`could not drop ${name}: ${e.message}`),
      );
      await embedded?.stop();
    },
  };
}
