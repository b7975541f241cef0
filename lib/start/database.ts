// Which PostgreSQL the CLI talks to: DATABASE_URL when set, else the embedded server of
// lib/platform/db/embedded.ts (started here, or reused when `npm start` already runs it). Sets
// process.env.DATABASE_URL so prisma()/pool() and every child process use the same database.
import { EMBEDDED_DIR, EMBEDDED_PORT, startEmbeddedPostgres } from "../platform/db/embedded";
import { setting } from "../platform/config";

export const EMBEDDED_DATABASE = "quiesce";

export interface DatabaseHandle {
  url: string;
  /** "external" (DATABASE_URL) or the embedded server's data folder. */
  source: "external" | "embedded";
  /** true when this process started the embedded server and must stop it. */
  owned: boolean;
  stop(): Promise<void>;
}

/** Hides the password when printing a URL. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = "***";
    return u.toString();
  } catch {
    return "(unparseable DATABASE_URL)";
  }
}

export async function openDatabase(log: (line: string) => void = () => {}): Promise<DatabaseHandle> {
  const external = setting("DATABASE_URL");
  if (external) {
    return { url: external, source: "external", owned: false, stop: async () => {} };
  }
  log(`starting embedded PostgreSQL on port ${EMBEDDED_PORT} (data: ${EMBEDDED_DIR}) …`);
  const server = await startEmbeddedPostgres();
  if (!server.owned) log("reusing the embedded PostgreSQL that is already running");
  await server.createDatabase(EMBEDDED_DATABASE);
  const url = server.url(EMBEDDED_DATABASE);
  process.env.DATABASE_URL = url;
  return { url, source: "embedded", owned: server.owned, stop: server.stop };
}

/** For one-shot CLI commands: open, run, and stop the embedded server again if this process started it. */
export async function withDatabase<T>(fn: (url: string) => Promise<T>, log?: (line: string) => void): Promise<T> {
  const db = await openDatabase(log);
  try {
    return await fn(db.url);
  } finally {
    await closeDbClients();
    await db.stop();
  }
}

/**
 * Ends this process's Prisma client and pg pools (the shared one and the gate's) if anything opened them (idle connections would keep
 * a one-shot command alive, and a server cannot stop fast while clients hold connections).
 */
export async function closeDbClients(): Promise<void> {
  const g = globalThis as unknown as {
    quiescePrisma?: { $disconnect(): Promise<void> };
    quiescePool?: { end(): Promise<void> };
    quiesceGatePool?: { end(): Promise<void> };
    quiesceDbClientsHeld?: boolean;
  };
  // Several commands share this process (`quiesce together`): the clients are closed once, after the last.
  if (g.quiesceDbClientsHeld) return;
  const p = g.quiescePrisma;
  // The gate's pool too: a process that asked the gate (the bench's sections, each on a database of its
  // own) would otherwise keep deciding against the database it first connected to.
  const pools = [g.quiescePool, g.quiesceGatePool];
  g.quiescePrisma = undefined;
  g.quiescePool = undefined;
  g.quiesceGatePool = undefined;
  await Promise.all([p?.$disconnect().catch(() => {}), ...pools.map((pl) => pl?.end().catch(() => {}))]);
}

/**
 * While `hold` is true, closeDbClients() does nothing: for several long-running commands in one process
 * (`quiesce together`), where the first to finish must not close the pool the others still use.
 */
export function holdDbClients(hold: boolean): void {
  (globalThis as unknown as { quiesceDbClientsHeld?: boolean }).quiesceDbClientsHeld = hold;
}

/**
 * For `npm start`: like openDatabase, but the embedded server runs detached from the terminal (a session
 * of its own) so that a Ctrl-C does not stop it before everything else; `npm start` stops it last. If
 * `npm start` dies abruptly, the server stops itself (lib/platform/db/embedded.ts#spawnDetachedPostgres). No
 * process of ours hosts it: a Node process only for that cost some 50 MB (docs/operating.md#processes-and-memory).
 */
export async function openDatabaseHosted(log: (line: string) => void = () => {}): Promise<DatabaseHandle> {
  if (setting("DATABASE_URL")) return openDatabase(log);
  log(`starting embedded PostgreSQL on port ${EMBEDDED_PORT} (data: ${EMBEDDED_DIR}) …`);
  const server = await startEmbeddedPostgres({ detached: true });
  if (!server.owned) log("reusing the embedded PostgreSQL that is already running");
  await server.createDatabase(EMBEDDED_DATABASE);
  const url = server.url(EMBEDDED_DATABASE);
  process.env.DATABASE_URL = url;
  return { url, source: "embedded", owned: server.owned, stop: server.stop };
}
