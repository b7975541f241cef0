// `quiesce codex-bridge [--run <id> [--lease <id>]] -- <codex app-server command…>`: a JSON-RPC bridge between an
// app-server client (this process's stdin/stdout) and `codex app-server` (lib/agent/adapters/codex-bridge).
// stdout is the protocol channel: logs go to stderr; use `npm run --silent` or tsx directly.
import type { Command } from "./types";
import { parseFlags, UsageError } from "../../lib/cli/args";
import { adapterSetup, splitWrappedCommand } from "../../lib/cli/adapter-command";
import { setting } from "../../lib/platform/config";
import { runBridge } from "../../lib/agent/adapters/codex-bridge/bridge";

const USAGE =
  "quiesce codex-bridge [--run <parentRunId>] [--lease <parentLeaseId>] [--task <taskId>] [--url <url>] [--key <key>] -- <codex app-server command> [args…]";

export const codexBridgeCommand: Command = {
  summary: "Codex app-server bridge: every action asked of the gate (approval policy + sandbox imposed), turn/interrupt on kill",
  usage: USAGE,
  async run(argv) {
    const { flags, command, args } = splitWrappedCommand(argv, "app-server command (e.g. -- codex app-server)");
    const { values, positionals } = parseFlags(flags, {
      run: { type: "string" },
      lease: { type: "string" },
      task: { type: "string" },
      url: { type: "string" },
      key: { type: "string" },
    });
    if (positionals.length) throw new UsageError(`unexpected argument: ${positionals[0]}`);
    if (values.run !== undefined && !values.run.trim()) throw new UsageError("--run: empty");
    if (values.lease !== undefined && (!values.lease.trim() || values.run === undefined))
      throw new UsageError("--lease: the parent run's lease id, with --run");
    const { cfg, client } = adapterSetup({ url: values.url, key: values.key });
    const maxHoldMs = setting("QUIESCE_CODEX_MAX_HOLD_MS");
    const approvalWaitMs = setting("QUIESCE_APPROVAL_WAIT_MS");
    return runBridge({
      cfg,
      client,
      parentRunId: values.run,
      parentLeaseId: values.lease,
      taskId: values.task,
      command,
      args,
      maxHoldMs,
      approvalWaitMs,
    });
  },
};
