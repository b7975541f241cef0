// Where the database is. DATABASE_URL wins; without it, the embedded server (lib/platform/db/embedded.ts)
// that `npm start` runs. Processes started by `npm start` inherit DATABASE_URL from it.
import { embeddedUrl } from "./embedded-config";
import { setting } from "../config";
import { QuiesceError } from "../errors";

export function databaseUrl(): string {
  return setting("DATABASE_URL") ?? embeddedUrl("quiesce");
}

/**
 * The session connection for LISTEN/NOTIFY. A transaction pooler (PgBouncer pool_mode=transaction)
 * hands each transaction to any server connection, so a LISTEN would be registered on a connection
 * this client no longer owns and notifications would be lost without an error. Behind one
 * (QUIESCE_DB_POOLER=transaction) the listener needs QUIESCE_LISTEN_URL and is refused without it
 * (docs/deploy.md#pgbouncer).
 */
export function listenUrl(): string {
  const explicit = setting("QUIESCE_LISTEN_URL");
  const pooled = setting("QUIESCE_DB_POOLER") === "transaction";
  if (explicit && !(pooled && explicit === setting("DATABASE_URL"))) return explicit;
  if (pooled) {
    throw new QuiesceError(
      "unavailable",
      "LISTEN needs a session connection, but DATABASE_URL goes through a transaction pooler (QUIESCE_DB_POOLER=transaction): " +
        "set QUIESCE_LISTEN_URL to PostgreSQL itself or a session-mode pooler",
      { variable: "QUIESCE_LISTEN_URL" },
    );
  }
  return databaseUrl();
}
