// Where the embedded PostgreSQL of `npm start` lives and how to log in to it. Kept apart from
// embedded.ts (which starts the server) so the web app, which only needs the URL, does not pull the
// server code into its bundle.
//
// Every data folder gets its own random passwords, kept next to it in `<dataDir>.credentials`
// (mode 0600): a superuser used only to create databases and roles, and the application role the
// app connects as — not a superuser, owner of its database and nothing else.
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { setting } from "../config";

export const EMBEDDED_PORT = setting("QUIESCE_EMBEDDED_PG_PORT");
export const EMBEDDED_DIR = path.resolve(setting("QUIESCE_DATA_DIR"), "pgdata");

export interface EmbeddedCredentials {
  superuser: string;
  superPassword: string;
  appUser: string;
  appPassword: string;
}

export function credentialsFile(dataDir: string): string {
  return `${path.resolve(dataDir)}.credentials`;
}

export function readCredentials(dataDir: string): EmbeddedCredentials | null {
  const file = credentialsFile(dataDir);
  if (!existsSync(file)) return null;
  try {
    const c = JSON.parse(readFileSync(file, "utf8")) as EmbeddedCredentials;
    return c.superuser && c.superPassword && c.appUser && c.appPassword ? c : null;
  } catch {
    return null;
  }
}

function url(user: string, password: string, database: string, port: number): string {
  return `postgresql://${encodeURIComponent(user)}:${encodeURIComponent(password)}@127.0.0.1:${port}/${database}`;
}

/** The application role's URL for `database` on the embedded server of `dataDir`. */
export function embeddedUrl(database: string, port = EMBEDDED_PORT, dataDir = EMBEDDED_DIR): string {
  const c = readCredentials(dataDir);
  // Before the first start there are no credentials yet; the URL is only used after it.
  return c ? url(c.appUser, c.appPassword, database, port) : url("quiesce", "", database, port);
}

export function embeddedAdminUrl(database: string, port = EMBEDDED_PORT, dataDir = EMBEDDED_DIR): string {
  const c = readCredentials(dataDir);
  if (!c) throw new Error(`no credentials for the embedded PostgreSQL at ${dataDir}: start it first`);
  return url(c.superuser, c.superPassword, database, port);
}
