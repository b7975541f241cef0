// A fresh, migrated database for every eval run (TEST_DATABASE_URL's or DATABASE_URL's server, else an
// embedded PostgreSQL of its own: port 54332, data in .quiesce/evals-pgdata). Dropped afterwards unless
// asked to keep it for inspection.
import { freshDatabase as create, type FreshDatabase } from "../../lib/platform/db/fresh-database";
import { setting } from "../../lib/platform/config";

export type EvalDatabase = FreshDatabase;

export function freshDatabase(log: (l: string) => void): Promise<EvalDatabase> {
  return create({
    prefix: "quiesce_evals",
    embedded: { dataDir: ".quiesce/evals-pgdata", port: setting("QUIESCE_EVALS_PG_PORT") },
    log,
  });
}
