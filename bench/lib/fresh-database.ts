// Every bench run measures on a database of its own: created on DATABASE_URL's server (or on the
// embedded server when DATABASE_URL is unset), migrated, and dropped afterwards.
import pg from "pg";
import { migrate } from "../../lib/db/migrate";
import { startEmbeddedPostgres, type EmbeddedHandle } from "../../lib/db/embedded";

export interface FreshDatabase { url: string; server: string; drop(): Promise<void> }

function withDb(url: string, db: string): string {
  const u = new URL(url);
  u.pathname = `/${db}`;
  return u.toString();
}

export async function freshDatabase(log: (l: string) => void): Promise<FreshDatabase> {
  const name = `quiesce_bench_${process.pid}_${Date.now().toString(36)}`;
  let embedded: EmbeddedHandle | undefined;
  let adminUrl: string;
  let server: string;
  if (process.env.DATABASE_URL) {
    adminUrl = process.env.DATABASE_URL;
    const u = new URL(adminUrl);
    server = `PostgreSQL at ${u.hostname}:${u.port || 5432} (DATABASE_URL)`;
  } else {
    log("DATABASE_URL is unset: using the embedded PostgreSQL");
    embedded = await startEmbeddedPostgres();
    adminUrl = embedded.url("postgres");
    server = `embedded PostgreSQL (${embedded.owned ? "started for the bench" : "already running"})`;
  }
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE "${name}"`);
  await admin.end();
  const url = withDb(adminUrl, name);
  await migrate(url);
  log(`fresh database ${name} on ${server}`);
  return {
    url,
    server,
    drop: async () => {
      const a = new pg.Client({ connectionString: adminUrl });
      await a.connect();
      await a.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`).catch((e) => log(`could not drop ${name}: ${e}`));
      await a.end();
      await embedded?.stop();
    },
  };
}
