// What `npm start` runs, decided from plain inputs (pure, unit-tested): the web app and whichever of
// the companion CLI commands are registered in bin/commands/index.ts right now. Other parts of Quiesce
// register barrier-worker, provider-sim and demo as they land; start picks them up without changes.
import path from "node:path";
import { pathToFileURL } from "node:url";
import type { DemoKeyRole } from "../seed/demo-keys-file";
import { setting } from "../platform/config";

export interface StartOptions {
  port: number;
  dev: boolean;
  demo: boolean;
  /** Interface the web app listens on: 127.0.0.1 unless HOST says otherwise. */
  host?: string;
  /** Port of the API process (`quiesce api`); QUIESCE_API_PORT by default. */
  apiPort?: number;
  /** Port of the simulated deployment provider (`provider-sim`); QUIESCE_PROVIDER_SIM_PORT by default. */
  simPort?: number;
  /**
   * The prebuilt CLI's folder (lib/build/current.ts) when `npm start` runs from it: every companion then
   * runs that build's plain JavaScript. Unset or null (running from source, `npm run dev`): tsx.
   */
  builtDir?: string | null;
}

export interface ChildSpec {
  name: string;
  command: string;
  args: string[];
  /** The CLI commands this process runs: one, or several sharing the process (`quiesce together`). */
  members: string[];
  /** Started only after the web app answers HTTP (it calls the API). */
  afterWeb: boolean;
  /** When this child dies, everything stops (nothing is left half-running without the web app). */
  essential: boolean;
}

/** Companion commands in start order; `demo` is optional and comes last. */
export const COMPANIONS: { name: string; args: string[]; afterWeb: boolean; optional: boolean }[] = [
  // The machine API in a process of its own (agents' hot path; docs/deploy.md#the-api-process).
  { name: "api", args: [], afterWeb: false, optional: false },
  { name: "barrier-worker", args: [], afterWeb: false, optional: false },
  { name: "webhook-worker", args: [], afterWeb: false, optional: false },
  // Its port is filled in by planChildren (QUIESCE_PROVIDER_SIM_PORT).
  { name: "provider-sim", args: [], afterWeb: false, optional: false },
  { name: "demo", args: [], afterWeb: true, optional: true },
];

/**
 * Companions that share one process under `npm start` (`quiesce together`), when all their members run:
 * none is on the agents' hot path and a process each costs memory; the web app and the API process stay
 * apart (docs/design/process-layout.md). Started once the web app answers (the demo fleet needs the API).
 */
export const GROUPS: { name: string; members: string[] }[] = [
  { name: "workers", members: ["barrier-worker", "webhook-worker", "provider-sim", "demo"] },
  { name: "workers", members: ["barrier-worker", "webhook-worker", "provider-sim"] },
];

/**
 * V8 settings per process (not under --dev): a small young generation (1 MB semi-spaces; 2 MB for the API process, which
 * allocates per request at hundreds of requests a second; V8's default lets it grow to 16 MB), one V8 platform thread instead of one per CPU
 * (each keeps a malloc arena of its own), and an old-space cap so a leak ends in a loud crash rather
 * than in swap (docs/design/process-layout.md).
 */
export function nodeFlags(name: string): string[] {
  const semi = name === "api" ? 2 : 1;
  const old = name === "web" ? 512 : name === "api" ? 384 : 256;
  // Prisma's WebAssembly query compiler compiled by the baseline compiler only (no optimizing tier): less
  // code per process that runs a Prisma query, and no cost to the gate, which never runs Prisma; only the
  // routes that use Prisma run the slower code (docs/design/process-layout.md).
  const wasm = name === "workers" || name === "api" ? ["--liftoff-only"] : [];
  return [`--max-semi-space-size=${semi}`, `--max-old-space-size=${old}`, "--v8-pool-size=1", ...wasm];
}

export function parsePort(text: string | undefined, from: string): number {
  const port = Number(text);
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new Error(`${from}: not a TCP port: "${text}"`);
  return port;
}

/** QUIESCE_DEMO=0/false/no/off turns the demo fleet off, like --no-demo. */
export type Env = Record<string, string | undefined>;

export function demoEnabled(flagNoDemo: boolean | undefined, env: Env): boolean {
  if (flagNoDemo) return false;
  return setting("QUIESCE_DEMO", env);
}

/**
 * `next start` makes its own http server: this preload (node --import) gives it the request bounds the
 * API process has (lib/start/http-timeouts.mjs), read from the settings here.
 */
export function httpBoundsImport(root: string, env: Env = process.env): string[] {
  const bounds = new URLSearchParams({
    headers: String(setting("QUIESCE_HTTP_HEADERS_TIMEOUT_MS", env)),
    request: String(setting("QUIESCE_HTTP_REQUEST_TIMEOUT_MS", env)),
    idle: String(setting("QUIESCE_HTTP_BODY_IDLE_MS", env)),
  });
  return ["--import", `${pathToFileURL(path.join(root, "lib", "start", "http-timeouts.mjs")).href}?${bounds}`];
}

export function planChildren(root: string, registered: readonly string[], opts: StartOptions): ChildSpec[] {
  const node = process.execPath;
  const nextBin = path.join(root, "node_modules", "next", "dist", "bin", "next");
  // Production: the prebuilt JavaScript (no TypeScript compiler in the process); from source: tsx.
  const cli = opts.builtDir ? [path.join(opts.builtDir, "quiesce.mjs")] : ["--import", "tsx", path.join(root, "bin", "quiesce.ts")];
  // Every child ends itself if `npm start` dies without stopping it (lib/start/exit-with-parent.mjs).
  const watchdog = ["--import", path.join(root, "lib", "start", "exit-with-parent.mjs")];
  // Production: Next behind the project's front (lib/start/web-front.ts), which decides each request's
  // source address from the socket and bounds how long a client may take to send a request; it takes
  // `next start`'s arguments. `--dev`: Next's own dev server, with the same bounds preloaded.
  const web = opts.dev
    ? [...httpBoundsImport(root), nextBin, "dev"]
    : [
        ...(opts.builtDir ? [path.join(opts.builtDir, "web.mjs")] : ["--import", "tsx", path.join(root, "lib", "start", "web-main.ts")]),
        "start",
      ];
  const children: ChildSpec[] = [
    {
      name: "web",
      command: node,
      args: [...(opts.dev ? [] : nodeFlags("web")), ...watchdog, ...web, "-p", String(opts.port), "-H", opts.host ?? "127.0.0.1"],
      members: ["web"],
      afterWeb: false,
      essential: true,
    },
  ];
  const wanted = COMPANIONS.filter((c) => registered.includes(c.name) && (c.name !== "demo" || opts.demo)).map((c) => ({
    name: c.name,
    args:
      c.name === "api"
        ? // Loopback only: agents come in through the console's port, which forwards /api/v1 here.
          ["--port", String(opts.apiPort ?? setting("QUIESCE_API_PORT")), "--host", "127.0.0.1"]
        : c.name === "provider-sim"
          ? ["--port", String(opts.simPort ?? setting("QUIESCE_PROVIDER_SIM_PORT"))]
          : c.args,
    afterWeb: c.afterWeb,
  }));
  const taken = new Set<string>();
  for (const c of wanted) {
    if (taken.has(c.name)) continue;
    const group = opts.dev
      ? undefined
      : GROUPS.find((g) => g.members.includes(c.name) && g.members.every((m) => wanted.some((w) => w.name === m)));
    const members = group ? wanted.filter((w) => group.members.includes(w.name)) : [c];
    for (const m of members) taken.add(m.name);
    const name = group?.name ?? c.name;
    const command = group ? ["together", ...members.flatMap((m, i) => [...(i ? ["+"] : []), m.name, ...m.args])] : [c.name, ...c.args];
    children.push({
      name,
      command: node,
      args: ["--conditions=react-server", ...(opts.dev ? [] : nodeFlags(name)), ...watchdog, ...cli, ...command],
      members: members.map((m) => m.name),
      afterWeb: members.some((m) => m.afterWeb),
      // Without the API process no agent can ask the gate: like the web app, it takes everything down.
      essential: members.some((m) => m.name === "api"),
    });
  }
  return children;
}

export interface ChildEnvInput {
  databaseUrl: string;
  port: number;
  /** When the API process runs: the control plane address agents, workers and the demo call. */
  apiPort?: number;
  /** The simulated provider's port (QUIESCE_PROVIDER_SIM_PORT by default). */
  simPort?: number;
  authSecret: string;
  /** With apiPort: the per-start secret the front shows the API process (lib/start/api-forward.ts). */
  frontSecret?: string;
  keys: Partial<Record<DemoKeyRole, string>>;
}

/**
 * Every child gets the same database and control plane address. QUIESCE_API_KEY is the demo agent key
 * (what the demo fleet acts with); each demo key is also passed under its own name.
 */
export function childEnv(base: Env, i: ChildEnvInput): Env {
  const env: Env = {
    ...base,
    DATABASE_URL: i.databaseUrl,
    PORT: String(i.port),
    QUIESCE_URL: `http://127.0.0.1:${i.apiPort ?? i.port}`,
    ...(i.apiPort !== undefined ? { QUIESCE_API_PORT: String(i.apiPort) } : {}),
    // The console's port forwards /api/v1 to the API process: one base URL for agents.
    ...(i.apiPort !== undefined && i.frontSecret
      ? { QUIESCE_API_UPSTREAM: `http://127.0.0.1:${i.apiPort}`, QUIESCE_FRONT_SECRET: i.frontSecret }
      : {}),
    NEXTAUTH_URL: base.NEXTAUTH_URL ?? `http://localhost:${i.port}`,
    NEXTAUTH_SECRET: i.authSecret,
    QUIESCE_PROVIDER_SIM_URL: `http://127.0.0.1:${i.simPort ?? setting("QUIESCE_PROVIDER_SIM_PORT", base)}`,
    // `npm start` is read by a person: readable log lines unless asked otherwise.
    QUIESCE_LOG_FORMAT: base.QUIESCE_LOG_FORMAT ?? "pretty",
    // glibc keeps a malloc arena per thread that ever allocated (up to 8 per CPU) and rarely returns
    // their memory; two are plenty for these processes (docs/design/process-layout.md).
    MALLOC_ARENA_MAX: base.MALLOC_ARENA_MAX ?? "2",
  };
  const named: Record<DemoKeyRole, string> = {
    agent: "QUIESCE_AGENT_KEY",
    worker: "QUIESCE_WORKER_KEY",
    gateway: "QUIESCE_GATEWAY_KEY",
    operator: "QUIESCE_OPERATOR_KEY",
    otherAgent: "QUIESCE_OTHER_AGENT_KEY",
  };
  for (const [role, name] of Object.entries(named) as [DemoKeyRole, string][]) {
    const secret = i.keys[role];
    if (secret) env[name] = secret;
  }
  if (i.keys.agent) env.QUIESCE_API_KEY = i.keys.agent;
  return env;
}
