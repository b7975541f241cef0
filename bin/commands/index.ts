// The CLI's command registry: one file per command under bin/commands/, one line here.
// Entries load lazily so a process pays only for the command it runs (the Claude Code hook runs
// once per tool call and must answer fast); `help` loads them all.
import type { Command } from "./types";
import type { CommandName } from "./names";

// Keyed by name; `satisfies` makes a command missing here (or from ./names.ts) a type error.
export const commands: Record<string, () => Promise<Command>> = {
  migrate: () => import("./migrate").then((m) => m.migrateCommand),
  seed: () => import("./seed").then((m) => m.seedCommand),
  keys: () => import("./keys").then((m) => m.keysCommand),
  runs: () => import("./runs").then((m) => m.runsCommand),
  pause: () => import("./pause").then((m) => m.pauseCommand),
  resume: () => import("./resume").then((m) => m.resumeCommand),
  kill: () => import("./kill").then((m) => m.killCommand),
  stop: () => import("./stop").then((m) => m.stopCommand),
  stops: () => import("./stops").then((m) => m.stopsCommand),
  breaker: () => import("./breaker").then((m) => m.breakerCommand),
  start: () => import("./start").then((m) => m.startCommand),
  hook: () => import("./hook").then((m) => m.hookCommand),
  "mcp-gateway": () => import("./mcp-gateway").then((m) => m.mcpGatewayCommand),
  "a2a-gateway": () => import("./a2a-gateway").then((m) => m.a2aGatewayCommand),
  "codex-bridge": () => import("./codex-bridge").then((m) => m.codexBridgeCommand),
  "barrier-worker": () => import("./barrier-worker").then((m) => m.barrierWorkerCommand),
  "webhook-worker": () => import("./webhook-worker").then((m) => m.webhookWorkerCommand),
  webhooks: () => import("./webhooks").then((m) => m.webhooksCommand),
  providers: () => import("./providers").then((m) => m.providersCommand),
  verify: () => import("./verify").then((m) => m.verifyCommand),
  "provider-sim": () => import("./provider-sim").then((m) => m.providerSimCommand),
  receipt: () => import("./receipt").then((m) => m.receiptCommand),
  reconcile: () => import("./reconcile").then((m) => m.reconcileCommand),
  recovery: () => import("./recovery").then((m) => m.recoveryCommand),
  restart: () => import("./restart").then((m) => m.restartCommand),
  demo: () => import("./demo").then((m) => m.demoCommand),
  drill: () => import("./drill").then((m) => m.drillCommand),
  audit: () => import("./audit").then((m) => m.auditCommand),
  members: () => import("./members").then((m) => m.membersCommand),
  api: () => import("./api").then((m) => m.apiCommand),
  together: () => import("./together").then((m) => m.togetherCommand),
  exec: () => import("./exec").then((m) => m.execCommand),
} satisfies Record<CommandName, () => Promise<Command>>;
