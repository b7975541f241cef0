// Vitest global setup: one fresh, migrated database per test run (lib/platform/db/fresh-database.ts).
// With TEST_DATABASE_URL or DATABASE_URL set (CI: the machine's PostgreSQL) it is created on that
// server; otherwise on an embedded server with its own port and data folder, so it never touches the
// data `npm start` keeps. Dropped when the run ends.
import type { TestProject } from "vitest/node";
import { freshDatabase } from "../lib/platform/db/fresh-database";

declare module "vitest" {
  export interface ProvidedContext {
    databaseUrl: string;
  }
}

export default async function setup(project: TestProject) {
  const db = await freshDatabase({ prefix: "quiesce_test", embedded: { dataDir: ".quiesce/test-pgdata", port: 54330 } });
  process.env.DATABASE_URL = db.url;
  project.provide("databaseUrl", db.url);
  return () => db.drop();
}
