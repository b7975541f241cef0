// What `npm start` runs, decided from plain inputs (pure, unit-tested): the web app and whichever of
// the companion CLI commands are registered in bin/commands/index.ts right now. Other parts of Quiesce
// register barrier-worker, provider-sim and demo as they land; start picks them up without changes.
import path from "node:path";
import type { DemoKeyRole } from "../seed/demo-keys-file";
import { setting } from "../config";

export const PROVIDER_SIM_PORT = 4700;

export interface StartOptions {
  port: number;
  dev: boolean;
  demo: boolean;
  /** Interface the web app listens on: 127.0.0.1 unless HOST says otherwise. */
  host?: string;
  /** Port of the API process (`quiesce api`); QUIESCE_API_PORT by default. */
  apiPort?: number;
}

export interface ChildSpec {
  name: string;
  command: string;
  args: string[];
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
  { name: "provider-sim", args: ["--port", String(PROVIDER_SIM_PORT)], afterWeb: false, optional: false },
  { name: "demo", args: [], afterWeb: true, optional: true },
];

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

export function planChildren(root: string, registered: readonly string[], opts: StartOptions): ChildSpec[] {
  const node = process.execPath;
  const nextBin = path.join(root, "node_modules", "next", "dist", "bin", "next");
  const cli = path.join(root, "bin", "quiesce.ts");
  // Every child ends itself if `npm start` dies without stopping it (lib/start/exit-with-parent.mjs).
  const watchdog = ["--import", path.join(root, "lib", "start", "exit-with-parent.mjs")];
  const children: ChildSpec[] = [
    {
      name: "web",
      command: node,
      args: [...watchdog, nextBin, opts.dev ? "dev" : "start", "-p", String(opts.port), "-H", opts.host ?? "127.0.0.1"],
      afterWeb: false,
      essential: true,
    },
  ];
  for (const c of COMPANIONS) {
    if (!registered.includes(c.name)) continue;
    if (c.name === "demo" && !opts.demo) continue;
    const args =
      c.name === "api" ? ["--port", String(opts.apiPort ?? setting("QUIESCE_API_PORT")), "--host", opts.host ?? "127.0.0.1"] : c.args;
    children.push({
      name: c.name,
      command: node,
      args: ["--conditions=react-server", ...watchdog, "--import", "tsx", cli, c.name, ...args],
      afterWeb: c.afterWeb,
      // Without the API process no agent can ask the gate: like the web app, it takes everything down.
      essential: c.name === "api",
    });
  }
  return children;
}

export interface ChildEnvInput {
  databaseUrl: string;
  port: number;
  /** When the API process runs: the control plane address agents, workers and the demo call. */
  apiPort?: number;
  authSecret: string;
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
    NEXTAUTH_URL: base.NEXTAUTH_URL ?? `http://localhost:${i.port}`,
    NEXTAUTH_SECRET: i.authSecret,
    QUIESCE_PROVIDER_SIM_URL: `http://127.0.0.1:${PROVIDER_SIM_PORT}`,
    // `npm start` is read by a person: readable log lines unless asked otherwise.
    QUIESCE_LOG_FORMAT: base.QUIESCE_LOG_FORMAT ?? "pretty",
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
