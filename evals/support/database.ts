// A fresh, migrated database for every eval run: created on TEST_DATABASE_URL's (else DATABASE_URL's)
// server, or on an embedded PostgreSQL of its own (port 54332, data in .quiesce/evals-pgdata) when
// neither is set. Dropped afterwards unless asked to keep it for inspection.
import pg from "pg";
import { migrate } from "../../lib/db/migrate";
import { startEmbeddedPostgres, type EmbeddedHandle } from "../../lib/db/embedded";

export interface EvalDatabase { url: string; name: string; server: string; drop(): Promise<void> }

function withDb(url: string, db: string): string {
  const u = new URL(url);
  u.pathname = `/${db}`;
  return u.toString();
}

export async function freshDatabase(log: (l: string) => void): Promise<EvalDatabase> {
  const name = `quiesce_evals_${process.pid}_${Date.now().toString(36)}`;
  const external = process.env.TEST_DATABASE_URL ?? process.env.DATABASE_URL;
  let embedded: EmbeddedHandle | undefined;
  let adminUrl: string;
  let server: string;
  if (external) {
    adminUrl = external;
    const u = new URL(adminUrl);
    server = `PostgreSQL at ${u.hostname}:${u.port || 5432} (${process.env.TEST_DATABASE_URL ? "TEST_DATABASE_URL" : "DATABASE_URL"})`;
  } else {
    log("no TEST_DATABASE_URL / DATABASE_URL: starting an embedded PostgreSQL for the evals");
    embedded = await startEmbeddedPostgres({ dataDir: ".quiesce/evals-pgdata", port: Number(process.env.QUIESCE_EVALS_PG_PORT ?? 54332) });
    adminUrl = embedded.url("postgres");
    server = "embedded PostgreSQL (.quiesce/evals-pgdata)";
  }
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE "${name}"`);
  await admin.end();
  const url = withDb(adminUrl, name);
  await migrate(url);
  log(`fresh database ${name} on ${server}`);
  return {
    url, name, server,
    drop: async () => {
      const a = new pg.Client({ connectionString: adminUrl });
      await a.connect();
      await a.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`).catch((e) => log(`could not drop ${name}: ${(e as Error).message}`));
      await a.end();
      await embedded?.stop();
    },
  };
}
