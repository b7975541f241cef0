// `quiesce codex-bridge [--run <id>] -- <codex app-server command…>`: a JSON-RPC bridge between an
// app-server client (this process's stdin/stdout) and `codex app-server` (lib/adapters/codex-bridge).
// stdout is the protocol channel: logs go to stderr; use `npm run --silent` or tsx directly.
import type { Command } from "./types";
import { parseFlags, UsageError } from "../../lib/cli/args";
import { adapterConfig, AdapterConfigError, envInt } from "../../lib/adapters/common/config";
import { makeClient } from "../../lib/adapters/common/control";
import { runBridge } from "../../lib/adapters/codex-bridge/bridge";

const USAGE = "quiesce codex-bridge [--run <parentRunId>] [--task <taskId>] [--url <url>] [--key <key>] -- <codex app-server command> [args…]";

export const codexBridgeCommand: Command = {
  summary: "Codex app-server bridge: approvals from the gate, turn/interrupt on kill",
  usage: USAGE,
  async run(argv) {
    const sep = argv.indexOf("--");
    if (sep < 0 || sep === argv.length - 1) throw new UsageError("the app-server command goes after `--` (e.g. -- codex app-server)");
    const { values, positionals } = parseFlags(argv.slice(0, sep), {
      run: { type: "string" }, task: { type: "string" }, url: { type: "string" }, key: { type: "string" },
    });
    if (positionals.length) throw new UsageError(`unexpected argument: ${positionals[0]}`);
    if (values.run !== undefined && !values.run.trim()) throw new UsageError("--run: empty");
    let cfg;
    try {
      cfg = adapterConfig({ url: values.url, key: values.key });
    } catch (err) {
      if (err instanceof AdapterConfigError) throw new UsageError(err.message);
      throw err;
    }
    const [command, ...args] = argv.slice(sep + 1);
    return runBridge({
      cfg, client: makeClient(cfg, envInt(process.env, "QUIESCE_GATE_TIMEOUT_MS", 5000)),
      parentRunId: values.run, taskId: values.task, command: command!, args,
    });
  },
};
