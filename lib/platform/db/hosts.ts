// Multi-host connection strings for a highly available PostgreSQL (docs/deploy.md#high-availability).
//
// libpq accepts several hosts, `postgresql://u@h1:5432,h2:5433/db?target_session_attrs=read-write` or
// `host=h1,h2 port=5432,5433 dbname=db target_session_attrs=read-write`, and connects to the first one
// that takes writes. node-postgres does not, so this module does it for every pg.Client we open (the
// Prisma adapter's pool, the gate's pool, the LISTEN client): a connection first finds the primary
// (probing each host with `SHOW transaction_read_only`), connects to it, and checks again on its own
// session before it is handed out. Writes never reach a standby: a connection that lands on one is
// closed with an error, and the caller fails closed (the gate answers deny control_unavailable).
//
// A single-host string is passed through untouched, so nothing changes for ordinary deployments.
import pg from "pg";

export type TargetSessionAttrs = "any" | "read-write";

export interface HostPort {
  host: string;
  port: number;
}

export interface ParsedConnection {
  hosts: HostPort[];
  targetSessionAttrs: TargetSessionAttrs;
  /** Everything but host and port, in node-postgres' config form. */
  base: pg.ClientConfig;
}

const DEFAULT_PORT = 5432;

/** Parses either form; returns null for a single-host string without target_session_attrs. */
export function parseMultiHost(connectionString: string): ParsedConnection | null {
  const s = connectionString.trim();
  const parsed = /^postgres(ql)?:\/\//i.test(s) ? parseUrlForm(s) : parseKeywordForm(s);
  if (!parsed) return null;
  if (parsed.hosts.length < 2 && parsed.targetSessionAttrs === "any") return null;
  return parsed;
}

function attrs(v: string | undefined): TargetSessionAttrs {
  if (v === undefined || v === "any") return "any";
  if (v === "read-write" || v === "primary") return "read-write";
  throw new Error(`target_session_attrs=${v} is not supported (use read-write or any)`);
}

function hostList(hosts: string[], ports: string[]): HostPort[] {
  return hosts.map((h, i) => {
    const p = ports[i] ?? ports[0] ?? String(DEFAULT_PORT);
    const port = Number(p || DEFAULT_PORT);
    if (!h || !Number.isInteger(port) || port < 1 || port > 65_535) throw new Error(`bad host or port in connection string: "${h}:${p}"`);
    return { host: h, port };
  });
}

function parseUrlForm(s: string): ParsedConnection | null {
  const m = /^postgres(?:ql)?:\/\/(?:([^@/]*)@)?([^/?]*)(\/[^?]*)?(?:\?(.*))?$/i.exec(s);
  if (!m) return null;
  const [, userinfo, hostpart, path, query] = m;
  const params = new URLSearchParams(query ?? "");
  const hosts: string[] = [];
  const ports: string[] = [];
  for (const item of (hostpart ?? "").split(",")) {
    const hp = /^(\[[^\]]+\]|[^:]*)(?::(\d*))?$/.exec(item);
    if (!hp) throw new Error(`bad host in connection string: "${item}"`);
    hosts.push(decodeURIComponent(hp[1]!.replace(/^\[|\]$/g, "")) || "localhost");
    ports.push(hp[2] ?? "");
  }
  const base: pg.ClientConfig = {};
  if (userinfo) {
    const [u, ...pw] = userinfo.split(":");
    base.user = decodeURIComponent(u!);
    if (pw.length) base.password = decodeURIComponent(pw.join(":"));
  }
  const db = path?.slice(1);
  if (db) base.database = decodeURIComponent(db);
  applyParams(base, params);
  return {
    hosts: hostList(
      hosts,
      ports.map((p) => p || String(DEFAULT_PORT)),
    ),
    targetSessionAttrs: attrs(params.get("target_session_attrs") ?? undefined),
    base,
  };
}

function parseKeywordForm(s: string): ParsedConnection | null {
  const kv = new Map<string, string>();
  const re = /(\w+)\s*=\s*('(?:[^'\\]|\\.)*'|\S*)/g;
  let m: RegExpExecArray | null;
  while ((m = re.exec(s))) kv.set(m[1]!, m[2]!.startsWith("'") ? m[2]!.slice(1, -1).replace(/\\(.)/g, "$1") : m[2]!);
  if (!kv.size) return null;
  const hosts = (kv.get("host") ?? "localhost").split(",");
  const ports = (kv.get("port") ?? "").split(",").filter(Boolean);
  const base: pg.ClientConfig = {};
  if (kv.has("user")) base.user = kv.get("user");
  if (kv.has("password")) base.password = kv.get("password");
  if (kv.has("dbname")) base.database = kv.get("dbname");
  const params = new URLSearchParams();
  for (const [k, v] of kv) params.set(k, v);
  applyParams(base, params);
  return { hosts: hostList(hosts, ports), targetSessionAttrs: attrs(kv.get("target_session_attrs")), base };
}

function applyParams(base: pg.ClientConfig, params: URLSearchParams): void {
  const app = params.get("application_name");
  if (app) base.application_name = app;
  const timeout = params.get("connect_timeout");
  if (timeout && /^\d+$/.test(timeout)) base.connectionTimeoutMillis = Number(timeout) * 1000;
  const ssl = params.get("sslmode");
  if (ssl && ssl !== "disable" && ssl !== "allow" && ssl !== "prefer") base.ssl = ssl === "require" ? { rejectUnauthorized: false } : true;
}

/** True when this session takes writes (not a hot standby, not a read-only default). */
export async function isReadWrite(client: pg.Client): Promise<boolean> {
  const r = await client.query<{ transaction_read_only: string }>("SHOW transaction_read_only");
  return r.rows[0]?.transaction_read_only === "off";
}

/** Last host found to be the primary, per connection string (reported by primaryIndex). */
const lastPrimary = new Map<string, number>();

/**
 * Finds a host that satisfies target_session_attrs. All hosts are probed at once with short-lived
 * connections (a dead host or a pooler in front of one must not delay finding the live primary);
 * the first acceptable answer wins. A probe is bounded by the caller's connect timeout.
 */
export async function findTarget(p: ParsedConnection, key: string, extra: pg.ClientConfig = {}): Promise<HostPort> {
  const errors: string[] = [];
  const timeout = Math.min(extra.connectionTimeoutMillis || 5000, 5000);
  const probes = p.hosts.map(async (h, i) => {
    const probe = new pg.Client({
      ...p.base,
      ...pick(extra),
      connectionTimeoutMillis: timeout,
      query_timeout: timeout,
      host: h.host,
      port: h.port,
      application_name: "quiesce-primary-probe",
    });
    probe.on("error", () => {});
    try {
      await probe.connect();
      if (p.targetSessionAttrs === "any" || (await isReadWrite(probe))) return { h, i };
      throw new Error(`${h.host}:${h.port} is read-only (standby)`);
    } catch (e) {
      const msg = (e as Error).message;
      errors.push(msg.startsWith(h.host) ? msg : `${h.host}:${h.port}: ${msg}`);
      throw e;
    } finally {
      void probe.end().catch(() => {});
    }
  });
  try {
    const { h, i } = await Promise.any(probes);
    lastPrimary.set(key, i);
    return h;
  } catch {
    lastPrimary.delete(key);
    throw new Error(`no ${p.targetSessionAttrs === "read-write" ? "read-write " : ""}PostgreSQL host reachable (${errors.join("; ")})`);
  }
}

/** Index of the host last found to be the primary for this connection string (drills, logs). */
export function primaryIndex(connectionString: string): number | undefined {
  return lastPrimary.get(connectionString);
}

/** Connection settings a probe shares with the real connection (credentials, TLS, connect timeout). */
function pick(c: pg.ClientConfig): pg.ClientConfig {
  const out: pg.ClientConfig = {};
  if (c.ssl !== undefined) out.ssl = c.ssl;
  if (c.connectionTimeoutMillis !== undefined) out.connectionTimeoutMillis = c.connectionTimeoutMillis;
  return out;
}

/**
 * A pg.Client class bound to a multi-host connection string: connect() finds the primary, connects
 * to it and verifies the session takes writes. Usable as `Client` of a pg.Pool.
 */
export function multiHostClientClass(p: ParsedConnection, key: string): typeof pg.Client {
  class MultiHostClient extends pg.Client {
    private readonly extra: pg.ClientConfig;
    constructor(config?: string | pg.ClientConfig) {
      const c = typeof config === "string" ? {} : (config ?? {});
      const first = p.hosts[0]!;
      super({ ...p.base, ...c, connectionString: undefined, host: first.host, port: first.port });
      this.extra = c;
    }

    // node-postgres calls connect() with a callback (pg-pool) or without (await client.connect()).
    override connect(): Promise<pg.Client>;
    override connect(callback: ((err: Error) => void) | ((err: null, c: pg.Client) => void)): void;
    override connect(callback?: ((err: Error) => void) | ((err: null, c: pg.Client) => void)): Promise<pg.Client> | void {
      const run = this.connectToTarget().then(() => this as pg.Client);
      if (!callback) return run;
      run.then(
        (c) => (callback as (err: null, c: pg.Client) => void)(null, c),
        (e: Error) => (callback as (err: Error) => void)(e),
      );
    }

    private async connectToTarget(): Promise<void> {
      const target = await findTarget(p, key, this.extra);
      const self = this as unknown as { host: string; port: number; connectionParameters: { host: string; port: number } };
      self.host = self.connectionParameters.host = target.host;
      self.port = self.connectionParameters.port = target.port;
      await super.connect();
      // The primary may have changed between the probe and this connection (a failover in between).
      if (p.targetSessionAttrs === "read-write" && !(await isReadWrite(this).catch(() => false))) {
        lastPrimary.delete(key);
        await this.end().catch(() => {});
        throw new Error(`${target.host}:${target.port} is no longer read-write (failover in progress)`);
      }
    }
  }
  return MultiHostClient;
}

/**
 * node-postgres settings for a connection string: `{ connectionString }` for a single host, or the
 * parsed settings plus a `Client` class that finds the primary for a multi-host one.
 */
export function pgSettings(connectionString: string): { config: pg.ClientConfig; Client?: typeof pg.Client } {
  const p = parseMultiHost(connectionString);
  if (!p) return { config: { connectionString } };
  return { config: { ...p.base }, Client: multiHostClientClass(p, connectionString) };
}

/** One pg.Client for a connection string (single or multi-host). */
export function newClient(connectionString: string, extra: pg.ClientConfig = {}): pg.Client {
  const s = pgSettings(connectionString);
  const C = s.Client ?? pg.Client;
  return new C({ ...s.config, ...extra });
}

/**
 * One pg.Pool for a connection string (single or multi-host). An idle connection that dies (its
 * server crashed or failed over) is dropped by the pool and reported here instead of crashing the
 * process with an unhandled 'error' event; the next checkout connects afresh (to the new primary).
 */
export function newPool(connectionString: string, extra: pg.PoolConfig = {}, onIdleError?: (err: Error) => void): pg.Pool {
  const s = pgSettings(connectionString);
  const pool = new pg.Pool({ ...s.config, ...extra, ...(s.Client ? { Client: s.Client } : {}) });
  pool.on("error", (err) => onIdleError?.(err));
  return pool;
}
