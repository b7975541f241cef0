// Every environment variable Quiesce reads, in one table, each parsed with zod.
//
// Why: a hand-written `Number(process.env.X ?? default)` turns a typo into NaN and the process then
// behaves silently wrong (a NaN timeout fires at once, a NaN pool size means no limit). Here a bad
// value is an error that names the variable and what it accepts, and every entry point checks the
// whole table at start-up (`assertConfig`), so a misconfigured process stops before doing anything.
//
// Values are read from the environment on each `setting()` call rather than cached: `npm start`,
// the bench and the test setup set DATABASE_URL for the processes and modules they start, after
// this module is loaded. The docs' table of variables (docs/configuration.md) is generated from
// CONFIG by `npm run docs:config`; test/config-docs.test.ts fails when it is stale.
//
// zod/mini (the same validation core as `zod`, tree-shakable), and each schema is built on its
// first use: the bundled Claude Code hook loads this table in a fresh process on every tool call,
// and reads four of its entries (building ~100 classic-zod schemas cost that process more than its
// own work; see bench/hook.ts).
import * as z from "zod/mini";
import { QuiesceError } from "../errors";
import { parseTrustedProxies } from "../security/client-address";

export type Env = Record<string, string | undefined>;

export const GROUPS = {
  server: "Web server and console",
  database: "Database and queues",
  auth: "Sign-in",
  logging: "Logging",
  barrier: "Barrier engine",
  cli: "Command line, SDK and workers",
  adapters: "Harness adapters",
  demo: "Demo fleet and drills",
  integrations: "Signed receipts, webhooks, metrics and tracing",
  dev: "Tests, evals and benchmarks",
} as const;
export type Group = keyof typeof GROUPS;

export interface Setting<T> {
  readonly group: Group;
  readonly doc: string;
  /** What the variable accepts, in words; quoted in the error for a bad value. */
  readonly accepts: string;
  /** The default, as the docs show it; null when unset means "not set". */
  readonly shownDefault: string | null;
  /** Never echo the value (keys, passwords, secrets). */
  readonly secret: boolean;
  parse(raw: string): { ok: true; value: T } | { ok: false };
  readonly fallback: T;
}

interface Common {
  group: Group;
  doc: string;
  secret?: boolean;
}

function define<T>(
  makeSchema: () => z.ZodMiniType<T, unknown>,
  accepts: string,
  fallback: T,
  shownDefault: string | null,
  c: Common,
): Setting<T> {
  let schema: z.ZodMiniType<T, unknown> | undefined;
  return {
    group: c.group,
    doc: c.doc,
    accepts,
    shownDefault,
    secret: c.secret ?? false,
    fallback,
    parse(raw) {
      schema ??= makeSchema();
      const r = schema.safeParse(raw);
      return r.success ? { ok: true, value: r.data } : { ok: false };
    },
  };
}

const intSchema = (min: number, max: number) => () =>
  z.pipe(z.pipe(z.string().check(z.regex(/^-?\d+$/)), z.transform(Number)), z.int().check(z.minimum(min), z.maximum(max)));
const range = (min: number, max: number) => `an integer from ${min} to ${max}`;

/** An integer within [min, max], with a default. */
function int(min: number, max: number, fallback: number, c: Common): Setting<number> {
  return define(intSchema(min, max), range(min, max), fallback, String(fallback), c);
}
/** An integer within [min, max], or unset. */
function optionalInt(min: number, max: number, c: Common): Setting<number | undefined> {
  return define<number | undefined>(intSchema(min, max), range(min, max), undefined, null, c);
}
const port = (fallback: number, c: Common) => int(1, 65_535, fallback, c);

function text(c: Common): Setting<string | undefined>;
function text(c: Common, fallback: string): Setting<string>;
function text(c: Common, fallback?: string): Setting<string | undefined> {
  return define<string | undefined>(() => z.string().check(z.minLength(1)), "any non-empty text", fallback, fallback ?? null, c);
}

const urlSchema = (protocols: string[]) => () =>
  z.string().check(
    z.refine((s) => {
      try {
        return protocols.includes(new URL(s).protocol);
      } catch {
        return false;
      }
    }),
  );
function url(protocols: string[], c: Common): Setting<string | undefined>;
function url(protocols: string[], c: Common, fallback: string): Setting<string>;
function url(protocols: string[], c: Common, fallback?: string): Setting<string | undefined> {
  const accepts = `a URL (${protocols.map((p) => p.replace(/:$/, "")).join(", ")})`;
  return define<string | undefined>(urlSchema(protocols), accepts, fallback, fallback ?? null, c);
}

function oneOf<const V extends readonly [string, ...string[]]>(values: V, fallback: V[number], c: Common): Setting<V[number]> {
  return define(() => z.enum(values), `one of ${values.map((v) => `"${v}"`).join(", ")}`, fallback, fallback, c);
}

const TRUE = ["1", "true", "yes", "on"];
const FALSE = ["0", "false", "no", "off"];
function flag(fallback: boolean, c: Common): Setting<boolean> {
  const schema = () =>
    z.pipe(
      z.pipe(
        z.pipe(
          z.string(),
          z.transform((s) => s.toLowerCase()),
        ),
        z.enum([...TRUE, ...FALSE] as [string, ...string[]]),
      ),
      z.transform((s: string) => TRUE.includes(s)),
    );
  return define(schema, "1/true/yes/on or 0/false/no/off", fallback, fallback ? "1" : "0", c);
}

/**
 * A PostgreSQL connection string: a URL, including libpq's multi-host form
 * (`postgresql://u@h1:5432,h2:5433/db?target_session_attrs=read-write`), or the keyword form
 * (`host=h1,h2 port=5432,5433 dbname=db target_session_attrs=read-write`); see lib/platform/db/hosts.ts.
 */
function pgConnection(c: Common): Setting<string | undefined> {
  const schema = () =>
    z.string().check(
      z.refine((s) => {
        const t = s.trim();
        if (/^postgres(ql)?:\/\/[^/?]*,/i.test(t)) return /^postgres(ql)?:\/\/(?:[^@/]*@)?[^/?\s]+(?:\/[^?\s]*)?(?:\?\S*)?$/i.test(t);
        if (/^postgres(ql)?:/i.test(t)) {
          try {
            return PG.includes(new URL(t).protocol);
          } catch {
            return false;
          }
        }
        return /^(\s*\w+\s*=\s*('(?:[^'\\]|\\.)*'|\S+))+\s*$/.test(t) && /\bhost\s*=/.test(t);
      }),
    );
  return define<string | undefined>(
    schema,
    "a PostgreSQL URL (postgres, postgresql; several hosts allowed) or a libpq keyword string",
    undefined,
    null,
    c,
  );
}

/**
 * Comma-separated CIDRs (`10.1.0.0/16`, `fd00::/8`) or bare addresses. Checked here with WHATWG's address
 * parser so this table stays free of node:net (the proxy loads it); lib/platform/security/outbound builds the list.
 */
function cidrList(c: Common): Setting<string[]> {
  const item = (s: string) => {
    const m = /^([0-9.]+|[0-9a-fA-F:.]*:[0-9a-fA-F:.]*)(?:\/(\d{1,3}))?$/.exec(s.trim());
    if (!m) return false;
    const v6 = m[1]!.includes(":");
    try {
      // A strict dotted quad (WHATWG would also take `127.1`), or whatever WHATWG takes as an IPv6 literal.
      if (!v6 && !/^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/.test(m[1]!)) return false;
      if (v6) new URL(`http://[${m[1]}]/`);
    } catch {
      return false;
    }
    return m[2] === undefined || Number(m[2]) <= (v6 ? 128 : 32);
  };
  const schema = () =>
    z.pipe(
      z.string().check(z.refine((s) => s.split(",").every((x) => x.trim() === "" || item(x)))),
      z.transform((s: string) =>
        s
          .split(",")
          .map((x) => x.trim())
          .filter(Boolean),
      ),
    );
  return define<string[]>(schema, "comma-separated CIDRs (10.0.0.0/8, fd00::/8) or addresses", [], null, c);
}

/** Comma-separated IP addresses and CIDR ranges (lib/platform/security/client-address.ts); empty by default. */
function proxyList(c: Common): Setting<string> {
  const schema = () =>
    z.string().check(
      z.refine((s) => {
        try {
          parseTrustedProxies(s);
          return true;
        } catch {
          return false;
        }
      }),
    );
  return define(schema, "comma-separated IP addresses or CIDR ranges (IPv4, IPv6)", "", "", c);
}

const HTTP = ["http:", "https:"];
const PG = ["postgres:", "postgresql:"];
const DAY_S = 24 * 60 * 60;

export const CONFIG = {
  // Web server and console
  PORT: port(3000, { group: "server", doc: "Port of the web app and API (`npm start --port` overrides)." }),
  QUIESCE_API_PORT: port(3001, {
    group: "server",
    doc: "Port of the machine API's own process (`quiesce api`, started by `npm start`, on loopback); the console's port forwards /api/v1 to it (docs/deploy.md#the-api-process).",
  }),
  QUIESCE_API_UPSTREAM: url(HTTP, {
    group: "server",
    doc: "Where the console's front forwards /api/v1 (set by `npm start` to the API process). Unset: Next answers /api/v1 itself.",
  }),
  QUIESCE_FRONT_SECRET: text({
    group: "server",
    doc: "Set by `npm start` for each start: the API process believes the front's X-Forwarded-For only on requests that carry it.",
    secret: true,
  }),
  NEXTAUTH_URL: url(HTTP, {
    group: "server",
    doc: "Public base URL of the console, for sign-in redirects and secure cookies. Default: http://localhost:$PORT.",
  }),
  QUIESCE_DATA_DIR: text(
    { group: "server", doc: "Folder for the embedded database, the generated session secret and the demo keys." },
    ".quiesce",
  ),
  QUIESCE_DEMO: flag(true, {
    group: "server",
    doc: "`npm start` seeds demo data and runs the demo fleet; 0 turns both off (like --no-demo).",
  }),
  QUIESCE_SKIP_BUILD: flag(false, { group: "server", doc: "`npm start` serves the existing production build even when it is stale." }),
  QUIESCE_SSE_KEEPALIVE_MS: int(10, 600_000, 15_000, {
    group: "server",
    doc: "Interval of keep-alive comments on the run event stream (ms).",
  }),
  QUIESCE_API_KEY_CACHE_MS: int(0, 5000, 2000, {
    group: "server",
    doc: "The API process (`quiesce api`) trusts a verified API key this long at most (0: no cache). Revocation, a role change, a disabled or removed user empties it at once over LISTEN/NOTIFY; this is the bound when a notice is lost. Expiry is checked on every use; while the LISTEN connection is down the cache is not used.",
  }),
  QUIESCE_SSE_MAX_SECONDS: int(1, DAY_S, 600, {
    group: "server",
    doc: "A run event stream closes after this many seconds; clients reconnect.",
  }),
  QUIESCE_CONSOLE_STREAM_SECONDS: int(1, DAY_S, 60, {
    group: "server",
    doc: "The console's live-update stream is rotated (closed and re-opened, re-authenticated) this often; the page does not show it.",
  }),
  QUIESCE_SSE_RECHECK_MS: int(1, 600_000, 5_000, {
    group: "server",
    doc: "Live streams re-check the caller's authority this often and close when it is gone (ms).",
  }),
  QUIESCE_HTTP_HEADERS_TIMEOUT_MS: int(1_000, 120_000, 10_000, {
    group: "server",
    doc: "The web app and the API process close a connection whose request headers have not all arrived this long after it opened (ms; 408).",
  }),
  QUIESCE_HTTP_REQUEST_TIMEOUT_MS: int(1_000, 600_000, 30_000, {
    group: "server",
    doc: "…and one whose whole request (headers and body) has not arrived this long after it began (ms; 408). Receiving only: a long answer such as an event stream is not cut.",
  }),
  QUIESCE_HTTP_BODY_IDLE_MS: int(1_000, 600_000, 10_000, {
    group: "server",
    doc: "…and one whose request body sends nothing for this long (ms).",
  }),
  HOST: text({ group: "server", doc: "Interface `npm start` binds the web app to." }, "127.0.0.1"),
  QUIESCE_QUOTA_RUNS_PER_MINUTE: int(0, 1_000_000, 600, {
    group: "server",
    doc: "Runs one API key may register per minute (a fixed window from the start of each minute, shared by every replica); past it 429 with Retry-After (docs/security/hardening.md#quotas; 0 = no limit).",
  }),
  QUIESCE_QUOTA_EVENT_STREAMS: int(0, 100_000, 100, {
    group: "server",
    doc: "Run event streams one API key may hold open at once, counted per process; past it 429 with Retry-After (docs/security/hardening.md#quotas; 0 = no limit).",
  }),
  QUIESCE_QUOTA_RUN_OPERATIONS: int(0, 1_000_000, 1_000, {
    group: "server",
    doc: "Operations not yet finished (queued, scheduled, running) one run may have; registering one more gets 429 with Retry-After (docs/security/hardening.md#quotas; 0 = no limit).",
  }),
  QUIESCE_QUOTA_OBSERVED_PER_RUN: int(0, 1_000_000, 100, {
    group: "server",
    doc: "`observed` reports one run may receive per hour (a fixed window, shared by every replica); past it 429 with Retry-After (docs/security/hardening.md#quotas; 0 = no limit).",
  }),

  // Database and queues
  DATABASE_URL: pgConnection({
    group: "database",
    doc: "PostgreSQL connection string; several hosts with `target_session_attrs=read-write` connect to the primary only (docs/deploy.md). Unset: the embedded server `npm start` runs.",
    secret: true,
  }),
  QUIESCE_DB_POOLER: oneOf(["none", "session", "transaction"], "none", {
    group: "database",
    doc: "What DATABASE_URL points at: PostgreSQL itself or a session pooler (`none`, `session`), or a transaction pooler such as PgBouncer in transaction mode, which LISTEN cannot use (then set QUIESCE_LISTEN_URL).",
  }),
  QUIESCE_LISTEN_URL: pgConnection({
    group: "database",
    doc: "Session connection for LISTEN/NOTIFY (direct to PostgreSQL or a session pooler). Default: DATABASE_URL, refused when QUIESCE_DB_POOLER=transaction.",
    secret: true,
  }),
  QUIESCE_DB_POOL: int(1, 1000, 10, { group: "database", doc: "Connections per process in the database pool." }),
  QUIESCE_DB_STATEMENT_TIMEOUT_MS: int(1, 600_000, 15_000, { group: "database", doc: "Statement timeout on every connection (ms)." }),
  QUIESCE_DB_LOCK_TIMEOUT_MS: int(1, 600_000, 5_000, { group: "database", doc: "Lock-wait timeout on every connection (ms)." }),
  QUIESCE_DB_ACQUIRE_TIMEOUT_MS: int(1, 600_000, 5_000, { group: "database", doc: "Longest wait for a pooled connection (ms)." }),
  QUIESCE_GATE_DB_BUDGET_MS: int(1, 600_000, 5_000, {
    group: "database",
    doc: "The gate's own budget: past it the answer is deny `control_unavailable` (ms).",
  }),
  QUIESCE_GATE_BATCH_INFLIGHT: int(0, 64, 2, {
    group: "database",
    doc: "Gate statements one process keeps in flight; calls that arrive meanwhile are decided together as one batch when one returns (docs/gate.md#batches; 0 = every call on its own).",
  }),
  QUIESCE_GATE_BATCH_MAX: int(2, 1_000, 64, { group: "database", doc: "Most gate calls decided in one batch." }),
  QUIESCE_GATE_BATCH_HOLD_MS: int(0, 1_000, 2, {
    group: "database",
    doc: "With a gate statement in flight, a waiting call is held this long for a fuller batch before another statement is sent, unless as many calls wait as the smallest batch in flight carries (docs/gate.md#batches; 0 = send at once) (ms).",
  }),
  QUIESCE_GATE_TEAM_INFLIGHT: int(0, 1_000, 32, {
    group: "database",
    doc: "Gate calls of one team a process's batcher keeps in flight while another team's call waits; the team's further calls wait for them (docs/gate.md#fair-share; 0 = no cap).",
  }),
  QUIESCE_EMBEDDED_PG_PORT: port(54329, { group: "database", doc: "Port of the embedded PostgreSQL of `npm start`." }),
  REDIS_URL: url(["redis:", "rediss:"], { group: "database", doc: "Redis for the BullMQ queue adapter." }, "redis://127.0.0.1:6379"),

  // Sign-in
  NEXTAUTH_SECRET: text({
    group: "auth",
    doc: "Signs session cookies. Unset: generated once and kept in $QUIESCE_DATA_DIR/auth-secret.",
    secret: true,
  }),
  AUTH_SECRET: text({ group: "auth", doc: "Accepted instead of NEXTAUTH_SECRET.", secret: true }),
  QUIESCE_SESSION_MAX_AGE: int(60, 30 * DAY_S, 12 * 60 * 60, {
    group: "auth",
    doc: "Absolute console session lifetime from sign-in, whatever the activity (seconds).",
  }),
  QUIESCE_SESSION_IDLE_SECONDS: int(60, 30 * DAY_S, 60 * 60, {
    group: "auth",
    doc: "A console session unused for this long ends (seconds).",
  }),
  QUIESCE_SIGNIN_FREE_FAILURES: int(1, 1000, 5, {
    group: "auth",
    doc: "Failed sign-ins per account and address pair, per address, and per account before back-off (the pair and the address) or the slow-down (the account) starts.",
  }),
  QUIESCE_SIGNIN_SLOWDOWN_MAX_MS: int(0, 10_000, 3000, {
    group: "auth",
    doc: "Longest delay before a password is checked for an account that keeps failing from many addresses (ms; a delay, never a block).",
  }),
  QUIESCE_BAD_KEY_FREE_FAILURES: int(1, 100_000, 20, {
    group: "auth",
    doc: "Bad API keys per source address before that address's bad keys get 429 (its valid keys are always served).",
  }),
  QUIESCE_TRUSTED_PROXIES: proxyList({
    group: "server",
    doc: "Reverse proxies whose forwarding header is believed (comma-separated addresses or CIDR ranges); empty: every client is its socket's peer.",
  }),
  QUIESCE_FORWARDED_HEADER: oneOf(["x-forwarded-for", "forwarded"], "x-forwarded-for", {
    group: "server",
    doc: "The header the trusted proxies set: X-Forwarded-For or RFC 7239 Forwarded (the other is ignored).",
  }),
  QUIESCE_THROTTLE_MAX_SECONDS: int(1, DAY_S, 15 * 60, { group: "auth", doc: "Longest sign-in / bad-key back-off (seconds)." }),
  QUIESCE_BCRYPT_ROUNDS: int(4, 15, 10, { group: "auth", doc: "bcrypt cost for console passwords." }),
  QUIESCE_OIDC_ISSUER: url(HTTP, { group: "auth", doc: "OpenID Connect issuer; with the client id and secret, adds single sign-on." }),
  QUIESCE_OIDC_CLIENT_ID: text({ group: "auth", doc: "OpenID Connect client id." }),
  QUIESCE_OIDC_CLIENT_SECRET: text({ group: "auth", doc: "OpenID Connect client secret.", secret: true }),
  QUIESCE_OIDC_NAME: text({ group: "auth", doc: "Label of the single sign-on button." }, "Single sign-on"),
  QUIESCE_DEMO_PASSWORD: text({
    group: "auth",
    doc: "Password of the seeded demo users. Unset: generated and printed once.",
    secret: true,
  }),

  // Logging
  QUIESCE_LOG_LEVEL: oneOf(["fatal", "error", "warn", "info", "debug", "trace", "silent"], "info", {
    group: "logging",
    doc: "Lowest level written.",
  }),
  QUIESCE_LOG_FORMAT: oneOf(["json", "pretty"], "json", {
    group: "logging",
    doc: "json: one JSON object a line (production); pretty: readable lines (`npm start` sets this).",
  }),
  QUIESCE_DEBUG: flag(false, { group: "logging", doc: "Also log the embedded PostgreSQL's own errors." }),

  // Barrier engine
  QUIESCE_BARRIER_CLAIM_MS: int(100, 3_600_000, 15_000, {
    group: "barrier",
    doc: "How long an engine's claim on a barrier lasts before another engine may take it over (ms).",
  }),
  QUIESCE_BARRIER_POLL_MS: int(10, 3_600_000, 5_000, { group: "barrier", doc: "Safety poll for barriers missed by LISTEN (ms)." }),
  QUIESCE_LOCAL_SETTLE_MS: int(0, 3_600_000, 5_000, {
    group: "barrier",
    doc: "How long in-process work gets to stop before it is settled as unknown (ms).",
  }),
  QUIESCE_BARRIER_CONCURRENCY: int(1, 256, 8, {
    group: "barrier",
    doc: "Barriers one engine works on at once (each holds a database connection while it works; keep below QUIESCE_DB_POOL).",
  }),
  QUIESCE_FLEET_FANOUT_CONCURRENCY: int(1, 64, 2, {
    group: "barrier",
    doc: "Batches of barriers a fleet stop's fan-out starts at once, alongside the barriers being worked on (each batch is one kill transaction).",
  }),
  QUIESCE_FLEET_BATCH_SIZE: int(1, 1000, 100, {
    group: "barrier",
    doc: "Targets of a fleet stop started in one kill transaction (one statement per table, one audit-lock acquisition), and barriers completed in one receipt transaction.",
  }),
  QUIESCE_AUDIT_CHECKPOINT_SECONDS: int(0, 30 * DAY_S, 600, {
    group: "barrier",
    doc: "Periodic audit-chain checkpoints by the barrier engine (seconds; 0 = off).",
  }),
  QUIESCE_BARRIER_TEAM: text({ group: "barrier", doc: "Only work on barriers of this team id (drills, tests)." }),
  QUIESCE_PROVIDER_SIM_URL: url(HTTP, { group: "barrier", doc: "The simulated deployment provider (`quiesce provider-sim`)." }),
  QUIESCE_PROVIDER_SIM_PORT: port(4700, {
    group: "barrier",
    doc: "Port of the simulated deployment provider (`quiesce provider-sim`, started by `npm start`); the seeded `deploy-sim` provider points here.",
  }),

  // Command line, SDK and workers
  QUIESCE_URL: url(HTTP, { group: "cli", doc: "Base URL of the control plane. CLI default: http://localhost:$PORT." }),
  QUIESCE_API_KEY: text({ group: "cli", doc: "Bearer API key for the CLI, SDK and adapters.", secret: true }),
  QUIESCE_API_KEY_FILE: text({ group: "cli", doc: "A file holding the API key, to keep it out of the agent's environment." }),
  QUIESCE_TIMEOUT_MS: int(1, 600_000, 10_000, { group: "cli", doc: "CLI request timeout (ms)." }),
  QUIESCE_RUN_ID: text({
    group: "cli",
    doc: "Set by `quiesce exec` for its command: the supervised run. The Codex bridge registers its threads under it when given no `--run`.",
  }),
  QUIESCE_LEASE_ID: text({ group: "cli", doc: "Set by `quiesce exec` for its command: the supervised run's lease.", secret: true }),
  QUIESCE_OPERATOR_KEY: text({ group: "cli", doc: "Operator key for `quiesce drill`.", secret: true }),
  QUIESCE_AGENT_KEY: text({ group: "cli", doc: "Agent key for `quiesce drill`.", secret: true }),
  QUIESCE_WORKER_KEY: text({ group: "cli", doc: "Worker key for `quiesce demo`'s queue workers.", secret: true }),
  QUIESCE_GATEWAY_KEY: text({ group: "cli", doc: "The demo gateway key (`npm start` passes it to its children).", secret: true }),
  QUIESCE_OTHER_AGENT_KEY: text({
    group: "cli",
    doc: "The demo's second team's agent key (`npm start` passes it to its children).",
    secret: true,
  }),

  // Harness adapters
  QUIESCE_GATE_TIMEOUT_MS: int(1, 600_000, 5_000, {
    group: "adapters",
    doc: "Timeout of one gate call from the MCP gateway or Codex bridge (ms).",
  }),
  QUIESCE_CODEX_MAX_HOLD_MS: int(1_000, DAY_S * 1000, 300_000, {
    group: "adapters",
    doc: "Longest time the Codex bridge holds an approval while the run is paused before it answers `decline` (ms).",
  }),
  QUIESCE_MANAGED_CONFIG: text({
    group: "adapters",
    doc: "Managed adapter configuration file, used when neither managed location exists (it supplies the URL and key file, and wins over the user's environment).",
  }),
  QUIESCE_HOOK_TIMEOUT_MS: int(1, 600_000, 3_000, {
    group: "adapters",
    doc: "Deadline of one Claude Code hook invocation (ms); it blocks when passed.",
  }),
  QUIESCE_HOOK_APPROVAL_WAIT_MS: int(0, 600_000, 20_000, {
    group: "adapters",
    doc: "How long the Claude Code hook holds a call waiting for a person's approval (ms); keep it inside Claude Code's hook timeout. 0: no wait.",
  }),
  QUIESCE_HOOK_APPROVAL_TIMEOUT: oneOf(["deny", "ask"], "deny", {
    group: "adapters",
    doc: "The hook's answer when nobody approved in time: deny the call, or ask the person at the terminal (the call is then not admitted by Quiesce).",
  }),
  QUIESCE_APPROVAL_WAIT_MS: int(0, DAY_S * 1000, 900_000, {
    group: "adapters",
    doc: "How long the MCP gateway and the Codex bridge hold a call waiting for a person's approval before refusing it (ms).",
  }),
  QUIESCE_HOOK_STATE_DIR: text({
    group: "adapters",
    doc: "Where the Claude Code hook keeps session state. Default: $XDG_STATE_HOME/quiesce.",
  }),
  QUIESCE_LEASE_TTL_SECONDS: optionalInt(1, DAY_S, {
    group: "adapters",
    doc: "Lease lifetime the hook asks for. Unset: the server's default.",
  }),
  QUIESCE_TASK_ID: text({ group: "adapters", doc: "Task id the hook's runs are registered under." }),
  QUIESCE_MCP_CALL_TIMEOUT_MS: int(1, 24 * 3_600_000, 3_600_000, {
    group: "adapters",
    doc: "Longest an upstream MCP tool call may run (ms).",
  }),

  // Signed receipts, webhooks, metrics and tracing (the OTEL_* variables are OpenTelemetry's own)
  QUIESCE_SIGNING_KEY_DIR: text({
    group: "integrations",
    doc: "Folder of the receipt-signing Ed25519 keys (0600). Default: $QUIESCE_DATA_DIR/signing.",
  }),
  QUIESCE_METRICS_TOKEN: define<string | undefined>(
    () => z.string().check(z.minLength(16)),
    "text of at least 16 characters",
    undefined,
    null,
    {
      group: "integrations",
      doc: "Bearer token for `/metrics`. Unset: the endpoint answers 404.",
      secret: true,
    },
  ),
  QUIESCE_PUBLIC_URL: url(HTTP, { group: "integrations", doc: "This deployment's public URL; a webhook endpoint may not point at it." }),
  QUIESCE_WEBHOOK_RETRY_BASE_MS: int(1, 3_600_000, 1_000, {
    group: "integrations",
    doc: "First webhook retry delay; it doubles per attempt (ms).",
  }),
  QUIESCE_WEBHOOK_RETRY_MAX_MS: int(1, DAY_S * 1000, 300_000, { group: "integrations", doc: "Longest webhook retry delay (ms)." }),
  QUIESCE_WEBHOOK_MAX_ATTEMPTS: int(1, 1000, 15, {
    group: "integrations",
    doc: "Delivery attempts before a webhook event becomes a dead letter.",
  }),
  QUIESCE_WEBHOOK_TIMEOUT_MS: int(100, 600_000, 10_000, { group: "integrations", doc: "Timeout of one webhook delivery (ms)." }),
  QUIESCE_WEBHOOK_POLL_MS: int(10, 600_000, 500, {
    group: "integrations",
    doc: "How often the webhook worker looks for due deliveries besides NOTIFY (ms).",
  }),
  QUIESCE_WEBHOOK_ALLOW_PRIVATE: cidrList({
    group: "integrations",
    doc: "Non-public addresses webhooks may reach anyway (loopback, private, link-local, ULA, CGNAT, … are refused at save and at every delivery); unset: none (docs/security/hardening.md#outbound-requests).",
  }),
  QUIESCE_PROVIDER_ALLOW_PRIVATE: cidrList({
    group: "integrations",
    doc: "Non-public addresses a provider registered through the API may point at (the CLI's are not judged); unset: none (docs/security/hardening.md#outbound-requests).",
  }),

  // Tests, evals and benchmarks
  QUIESCE_CLIENT_CACHE: text({
    group: "dev",
    doc: "Where the real-client tests install the pinned `claude`, `codex` and MCP reference server. Default: ~/.cache/quiesce/clients.",
  }),
  TEST_DATABASE_URL: url(PG, { group: "dev", doc: "Server on which the test suite creates (and drops) its database.", secret: true }),
  QUIESCE_EVAL_SERVER: oneOf(["auto", "next", "handlers"], "auto", { group: "dev", doc: "Which web server `npm run evals` starts." }),
  QUIESCE_EVALS_PG_PORT: port(54332, { group: "dev", doc: "Port of the evals' embedded PostgreSQL." }),
  QUIESCE_BENCH_ABORT_ROUNDS: int(1, 1000, 5, { group: "dev", doc: "Rounds of the abort-token benchmark." }),
  QUIESCE_E2E_PORT: port(3200, { group: "dev", doc: "Port of the web app the browser tests start." }),
  QUIESCE_E2E_SIM_PORT: port(4790, { group: "dev", doc: "Port of the simulated provider the browser tests start." }),
  QUIESCE_E2E_SKIP_BUILD: flag(false, { group: "dev", doc: "Browser tests reuse the existing production build." }),
  E2E_EXTERNAL: flag(false, { group: "dev", doc: "Browser tests run against a server started elsewhere (E2E_BASE_URL)." }),
  CHROMIUM_PATH: text({ group: "dev", doc: "The Chromium binary the browser tests drive." }, "/usr/bin/chromium"),
  POD_NAME: text({ group: "dev", doc: "Name of an eval pod process (set by the evals)." }),
  POD_QUEUE: text({ group: "dev", doc: "Queue an eval pod consumes (set by the evals)." }),
  POD_QUEUE_CONCURRENCY: int(1, 1000, 1, { group: "dev", doc: "Concurrency of an eval pod's queue worker." }),
} as const;

export type ConfigName = keyof typeof CONFIG;
export type ConfigValue<K extends ConfigName> = (typeof CONFIG)[K] extends Setting<infer T> ? T : never;
export type Config = { [K in ConfigName]: ConfigValue<K> };

/** A bad value of variable `name`, as the error the process stops with. */
export function configError(name: ConfigName, raw: string): QuiesceError {
  const s: Setting<unknown> = CONFIG[name];
  const shown = s.secret ? "(value hidden)" : JSON.stringify(raw);
  return new QuiesceError("bad_request", `${name}=${shown} is not valid: expected ${s.accepts}`, { variable: name, accepts: s.accepts });
}

/** The value of one variable; an empty value counts as unset. Throws (naming the variable) when malformed. */
export function setting<K extends ConfigName>(name: K, env: Env = process.env): ConfigValue<K> {
  const s = CONFIG[name] as Setting<ConfigValue<K>>;
  const raw = env[name]?.trim();
  if (raw === undefined || raw === "") return s.fallback;
  const r = s.parse(raw);
  if (!r.ok) throw configError(name, raw);
  return r.value;
}

/** Every problem in `env`, one line each (empty when all is well). */
export function configProblems(env: Env = process.env): string[] {
  const problems: string[] = [];
  for (const name of Object.keys(CONFIG) as ConfigName[]) {
    try {
      setting(name, env);
    } catch (err) {
      problems.push((err as Error).message);
    }
  }
  return problems;
}

/** All settings at once; throws one error listing every bad variable. */
export function readConfig(env: Env = process.env): Config {
  const problems = configProblems(env);
  if (problems.length > 0) throw new QuiesceError("bad_request", `invalid configuration:\n  ${problems.join("\n  ")}`, { problems });
  return Object.fromEntries((Object.keys(CONFIG) as ConfigName[]).map((n) => [n, setting(n, env)])) as Config;
}

/** Start-up check for every entry point: a bad value stops the process before it does anything. */
export function assertConfig(env: Env = process.env, exit: (code: number) => never = process.exit): void {
  const problems = configProblems(env);
  if (problems.length === 0) return;
  process.stderr.write(`quiesce: invalid configuration, not starting:\n  ${problems.join("\n  ")}\n`);
  exit(2);
}

/** The Markdown table of variables for docs/configuration.md. */
export function configMarkdown(): string {
  const out: string[] = [];
  for (const [group, title] of Object.entries(GROUPS)) {
    out.push(`### ${title}`, "", "| Variable | Default | Accepts | What it does |", "| --- | --- | --- | --- |");
    for (const [name, s] of Object.entries(CONFIG) as [string, Setting<unknown>][]) {
      if (s.group !== group) continue;
      const def = s.shownDefault === null ? "—" : `\`${s.shownDefault}\``;
      out.push(`| \`${name}\` | ${def} | ${s.accepts} | ${s.doc.replace(/\|/g, "\\|")}${s.secret ? " (secret: never logged)" : ""} |`);
    }
    out.push("");
  }
  return out.join("\n");
}
