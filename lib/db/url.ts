// Where the database is. DATABASE_URL wins; without it, the embedded server (lib/db/embedded.ts)
// that `npm start` runs. Processes started by `npm start` inherit DATABASE_URL from it.
import { embeddedUrl } from "./embedded-config";
import { setting } from "../config";

export function databaseUrl(): string {
  return setting("DATABASE_URL") ?? embeddedUrl("quiesce");
}
