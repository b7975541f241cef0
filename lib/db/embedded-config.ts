// Where the embedded PostgreSQL of `npm start` lives. Kept apart from embedded.ts (which starts the
// server and touches the file system) so the web app, which only needs the URL, does not pull the
// server code into its bundle.
import { setting } from "../config";
export const EMBEDDED_PORT = setting("QUIESCE_EMBEDDED_PG_PORT");
export const EMBEDDED_USER = "quiesce";
export const EMBEDDED_PASSWORD = "quiesce";

export function embeddedUrl(database: string, port = EMBEDDED_PORT): string {
  return `postgresql://${EMBEDDED_USER}:${EMBEDDED_PASSWORD}@127.0.0.1:${port}/${database}`;
}
