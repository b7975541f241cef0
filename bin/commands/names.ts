// The names of the CLI's commands, apart from the registry (./index.ts) so a command that needs the
// list (start plans its companion processes from it) does not import the registry that loads it.
export const COMMAND_NAMES = [
  "migrate",
  "seed",
  "keys",
  "runs",
  "pause",
  "resume",
  "kill",
  "stop",
  "stops",
  "breaker",
  "start",
  "hook",
  "mcp-gateway",
  "codex-bridge",
  "barrier-worker",
  "provider-sim",
  "receipt",
  "reconcile",
  "demo",
  "drill",
  "audit",
  "members",
] as const;
export type CommandName = (typeof COMMAND_NAMES)[number];
