// `quiesce codex-bridge [--run <id> [--lease <id>]] -- <codex app-server command…>`: a JSON-RPC bridge between an
// app-server client (this process's stdin/stdout) and `codex app-server` (lib/agent/adapters/codex-bridge).
// stdout is the protocol channel: logs go to stderr; use `npm run --silent` or tsx directly.
import type { Command } from "./types";
import { parseFlags, UsageError } from "../../lib/cli/args";
import { adapterSetup, splitWrappedCommand } from "../../lib/cli/adapter-command";
import { setting } from "../../lib/platform/config";
import { runBridge } from "../../lib/agent/adapters/codex-bridge/bridge";
import { execCommand } from "./exec";

/**
 * `--supervise`: this bridge and its app-server (with every shell a turn starts) run under `quiesce exec`
 * (docs/environment.md#launching-a-harness-under-exec): the same entry (node, its loader flags, this
 * script) is started again as exec's command, without --supervise, and registers its threads under
 * exec's run.
 */
function superviseArgv(
  v: { run?: string; lease?: string; task?: string; url?: string; key?: string; grace?: string },
  command: string,
  args: string[],
): string[] {
  const api = [...(v.url ? ["--url", v.url] : []), ...(v.key ? ["--key", v.key] : [])];
  return [
    "--harness",
    "codex",
    "--task",
    "codex:app-server",
    ...(v.run ? ["--parent", v.run, "--parent-lease", v.lease!] : []),
    ...(v.grace !== undefined ? ["--grace", v.grace] : []),
    ...api,
    "--",
    process.execPath,
    ...process.execArgv,
    process.argv[1]!,
    "codex-bridge",
    ...(v.task ? ["--task", v.task] : []),
    ...api,
    "--",
    command,
    ...args,
  ];
}

const USAGE =
  "quiesce codex-bridge [--run <parentRunId>] [--lease <parentLeaseId>] [--task <taskId>] [--url <url>] [--key <key>] [--supervise [--grace <seconds>]] -- <codex app-server command> [args…]";

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
      supervise: { type: "boolean" },
      grace: { type: "string" },
    });
    if (positionals.length) throw new UsageError(`unexpected argument: ${positionals[0]}`);
    if (values.run !== undefined && !values.run.trim()) throw new UsageError("--run: empty");
    if (values.lease !== undefined && (!values.lease.trim() || values.run === undefined))
      throw new UsageError("--lease: the parent run's lease id, with --run");
    if (values.grace !== undefined && !values.supervise) throw new UsageError("--grace: with --supervise");
    if (values.supervise) {
      if (values.run !== undefined && values.lease === undefined) throw new UsageError("--supervise --run: the parent's --lease too");
      return execCommand.run(superviseArgv(values, command, args));
    }
    const { cfg, client } = adapterSetup({ url: values.url, key: values.key });
    const maxHoldMs = setting("QUIESCE_CODEX_MAX_HOLD_MS");
    // Under `quiesce exec` the threads are children of the supervised run, so a stop of it reaches them.
    const parentRunId = values.run ?? setting("QUIESCE_RUN_ID");
    const parentLeaseId = values.run !== undefined ? values.lease : setting("QUIESCE_LEASE_ID");
    const approvalWaitMs = setting("QUIESCE_APPROVAL_WAIT_MS");
    return runBridge({ cfg, client, parentRunId, parentLeaseId, taskId: values.task, command, args, maxHoldMs, approvalWaitMs });
  },
};
