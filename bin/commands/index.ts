// The CLI's command registry: one file per command under bin/commands/, one line here.
import type { Command } from "./types";
import { migrateCommand } from "./migrate";
import { seedCommand } from "./seed";
import { keysCommand } from "./keys";
import { runsCommand } from "./runs";
import { pauseCommand } from "./pause";
import { resumeCommand } from "./resume";
import { killCommand } from "./kill";
import { breakerCommand } from "./breaker";
import { startCommand } from "./start";
import { hookCommand } from "./hook";
import { mcpGatewayCommand } from "./mcp-gateway";
import { codexBridgeCommand } from "./codex-bridge";
import { barrierWorkerCommand } from "./barrier-worker";
import { providerSimCommand } from "./provider-sim";
import { receiptCommand } from "./receipt";
import { reconcileCommand } from "./reconcile";
import { demoCommand } from "./demo";

export const commands: Record<string, Command> = {
  migrate: migrateCommand,
  seed: seedCommand,
  keys: keysCommand,
  runs: runsCommand,
  pause: pauseCommand,
  resume: resumeCommand,
  kill: killCommand,
  breaker: breakerCommand,
  start: startCommand,
  hook: hookCommand,
  "mcp-gateway": mcpGatewayCommand,
  "codex-bridge": codexBridgeCommand,
  "barrier-worker": barrierWorkerCommand,
  "provider-sim": providerSimCommand,
  receipt: receiptCommand,
  reconcile: reconcileCommand,
  demo: demoCommand,
};
