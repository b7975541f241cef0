// Vitest global setup: one fresh, migrated database per test run.
// With TEST_DATABASE_URL or DATABASE_URL set (CI: the machine's PostgreSQL), a new database is
// created on that server and dropped afterwards; otherwise the embedded server is used, on its own
// port and data folder so that it never touches the data `npm start` keeps.
import type { TestProject } from "vitest/node";
import pg from "pg";
import { migrate } from "../lib/db/migrate";
import { startEmbeddedPostgres, type EmbeddedHandle } from "../lib/db/embedded";

declare module "vitest" {
  export interface ProvidedContext { databaseUrl: string }
}

function withDatabase(url: string, db: string): string {
  const u = new URL(url);
  u.pathname = `/${db}`;
  return u.toString();
}

export default async function setup(project: TestProject) {
  const server = process.env.TEST_DATABASE_URL ?? process.env.DATABASE_URL;
  let embedded: EmbeddedHandle | undefined;
  const name = `quiesce_test_${process.pid}_${Date.now().toString(36)}`;
  let adminUrl: string;
  if (server) {
    adminUrl = server;
  } else {
    embedded = await startEmbeddedPostgres({ dataDir: ".quiesce/test-pgdata", port: 54330 });
    adminUrl = embedded.url("postgres");
  }
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE "${name}"`);
  await admin.end();
  const url = withDatabase(adminUrl, name);
  await migrate(url);
  process.env.DATABASE_URL = url;
  project.provide("databaseUrl", url);

  return async () => {
    const a = new pg.Client({ connectionString: adminUrl });
    await a.connect();
    await a.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`).catch(() => {});
    await a.end();
    await embedded?.stop();
  };
}
