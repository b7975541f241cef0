// Throwaway PostgreSQL servers and PgBouncer on this machine, for the HA tests and the HA drill:
// real engines (initdb, pg_ctl, pg_basebackup streaming replication, PgBouncer), temporary folders,
// free local ports. Run as root, the servers run as the `postgres` user (PostgreSQL refuses root).
// Never touches the machine's own cluster.
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import pg from "pg";

const isRoot = process.getuid?.() === 0;

export function pgBinDir(): string {
  for (const v of ["17", "16", "15"]) {
    const d = `/usr/lib/postgresql/${v}/bin`;
    if (fs.existsSync(path.join(d, "initdb"))) return d;
  }
  try {
    return execFileSync("pg_config", ["--bindir"], { encoding: "utf8" }).trim();
  } catch {
    throw new Error("PostgreSQL server binaries (initdb, pg_ctl) not found: install postgresql-15");
  }
}

/** Runs a command as the postgres user when we are root. */
export function asPostgres(cmd: string, args: string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): string {
  const [file, argv] = isRoot ? ["runuser", ["-u", "postgres", "--", cmd, ...args]] : [cmd, args];
  return execFileSync(file, argv, {
    encoding: "utf8",
    cwd: opts.cwd ?? "/tmp",
    env: { ...process.env, ...opts.env },
    stdio: ["ignore", "pipe", "pipe"],
  });
}

export function spawnAsPostgres(cmd: string, args: string[], opts: { env?: NodeJS.ProcessEnv } = {}): ChildProcess {
  const [file, argv] = isRoot ? ["runuser", ["-u", "postgres", "--", cmd, ...args]] : [cmd, args];
  return spawn(file, argv, { cwd: "/tmp", env: { ...process.env, ...opts.env }, stdio: ["ignore", "pipe", "pipe"] });
}

/** A temporary folder the postgres user owns. */
export function tempDir(prefix: string): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  fs.chmodSync(d, 0o700);
  if (isRoot) execFileSync("chown", ["postgres:postgres", d]);
  return d;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const a = srv.address();
      srv.close(() => (typeof a === "object" && a ? resolve(a.port) : reject(new Error("no port"))));
    });
  });
}

export interface LocalServer {
  dataDir: string;
  port: number;
  url(db?: string): string;
  /** Fast shutdown. */
  stop(): void;
  /** SIGKILL the postmaster (a crash, not a shutdown). */
  kill(): void;
  promote(): void;
  pid(): number | null;
}

function server(dataDir: string, port: number): LocalServer {
  const bin = pgBinDir();
  const pid = () => {
    try {
      return Number(fs.readFileSync(path.join(dataDir, "postmaster.pid"), "utf8").split("\n")[0]);
    } catch {
      return null;
    }
  };
  return {
    dataDir,
    port,
    pid,
    url: (db = "postgres") => `postgresql://postgres@127.0.0.1:${port}/${db}`,
    stop: () => {
      try {
        asPostgres(path.join(bin, "pg_ctl"), ["-D", dataDir, "-m", "fast", "-w", "stop"]);
      } catch {
        /* already down */
      }
    },
    kill: () => {
      const p = pid();
      if (p)
        try {
          process.kill(p, "SIGKILL");
        } catch {
          /* gone */
        }
    },
    promote: () => {
      asPostgres(path.join(bin, "pg_ctl"), ["-D", dataDir, "-w", "promote"]);
    },
  };
}

function start(dataDir: string, port: number): void {
  const bin = pgBinDir();
  const opts = `-p ${port} -k ${dataDir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200 -c wal_level=replica -c max_wal_senders=5 -c hot_standby=on`;
  asPostgres(path.join(bin, "pg_ctl"), ["-D", dataDir, "-l", path.join(dataDir, "server.log"), "-o", opts, "-w", "-t", "60", "start"]);
}

/** A fresh primary (trust auth on 127.0.0.1, replication allowed). */
export async function startPrimary(): Promise<LocalServer> {
  const bin = pgBinDir();
  const dataDir = path.join(tempDir("quiesce-pg-"), "data");
  asPostgres(path.join(bin, "initdb"), ["-D", dataDir, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync"]);
  fs.appendFileSync(path.join(dataDir, "pg_hba.conf"), "host replication postgres 127.0.0.1/32 trust\n");
  const port = await freePort();
  start(dataDir, port);
  return server(dataDir, port);
}

/** A hot standby streaming from `primary` (pg_basebackup -R). */
export async function startStandby(primary: LocalServer): Promise<LocalServer> {
  const bin = pgBinDir();
  const dataDir = path.join(tempDir("quiesce-pg-"), "data");
  asPostgres(path.join(bin, "pg_basebackup"), [
    "-h",
    "127.0.0.1",
    "-p",
    String(primary.port),
    "-U",
    "postgres",
    "-D",
    dataDir,
    "-R",
    "-X",
    "stream",
    "--no-sync",
  ]);
  const port = await freePort();
  start(dataDir, port);
  return server(dataDir, port);
}

export function removeServer(s: LocalServer): void {
  s.stop();
  fs.rmSync(path.dirname(s.dataDir), { recursive: true, force: true });
}

export interface LocalBouncer {
  port: number;
  url(db: string): string;
  stop(): void;
}

/** PgBouncer in transaction mode in front of `target` (every database, trust auth). */
export async function startPgBouncer(
  target: { host: string; port: number },
  opts: { poolSize?: number; queryWaitTimeoutS?: number } = {},
): Promise<LocalBouncer> {
  const dir = tempDir("quiesce-bouncer-");
  const port = await freePort();
  const ini = [
    "[databases]",
    `* = host=${target.host} port=${target.port}`,
    "[pgbouncer]",
    "listen_addr = 127.0.0.1",
    `listen_port = ${port}`,
    `unix_socket_dir = ${dir}`,
    "auth_type = trust",
    `auth_file = ${dir}/users.txt`,
    "pool_mode = transaction",
    `default_pool_size = ${opts.poolSize ?? 10}`,
    "max_client_conn = 500",
    "ignore_startup_parameters = extra_float_digits,statement_timeout,lock_timeout,idle_in_transaction_session_timeout,options",
    "server_reset_query =",
    // Fail fast when the server behind is gone (a failover): the client's own timeout then decides.
    "server_connect_timeout = 2",
    "server_login_retry = 1",
    `query_wait_timeout = ${opts.queryWaitTimeoutS ?? 3}`,
    `logfile = ${dir}/pgbouncer.log`,
    `pidfile = ${dir}/pgbouncer.pid`,
  ].join("\n");
  fs.writeFileSync(path.join(dir, "pgbouncer.ini"), ini + "\n");
  fs.writeFileSync(path.join(dir, "users.txt"), `"postgres" ""\n`);
  if (isRoot) execFileSync("chown", ["-R", "postgres:postgres", dir]);
  asPostgres("pgbouncer", ["-d", path.join(dir, "pgbouncer.ini")]);
  await waitFor(
    async () => {
      const c = new pg.Client({ host: "127.0.0.1", port, user: "postgres", database: "postgres" });
      c.on("error", () => {});
      try {
        await c.connect();
        await c.query("SELECT 1");
        return true;
      } catch {
        return false;
      } finally {
        await c.end().catch(() => {});
      }
    },
    15_000,
    "pgbouncer did not start",
  );
  return {
    port,
    url: (db) => `postgresql://postgres@127.0.0.1:${port}/${db}`,
    stop: () => {
      try {
        const pid = Number(fs.readFileSync(path.join(dir, "pgbouncer.pid"), "utf8"));
        process.kill(pid, "SIGTERM");
      } catch {
        /* gone */
      }
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Every descendant of `pid` (children first-level, then theirs), from /proc. */
export function descendants(pid: number): number[] {
  const out: number[] = [];
  let children: number[] = [];
  try {
    children = execFileSync("ps", ["-o", "pid=", "--ppid", String(pid)], { encoding: "utf8" })
      .split("\n")
      .map((l) => Number(l.trim()))
      .filter((n) => n > 0);
  } catch {
    /* none */
  }
  for (const c of children) out.push(c, ...descendants(c));
  return out;
}

export async function waitFor(check: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${what} (after ${timeoutMs} ms)`);
}
