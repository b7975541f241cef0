// `quiesce mcp-gateway --run <id> [--lease <id>] [--task <id>] -- <server command…>`: a gated stdio MCP
// server in front of an upstream stdio MCP server (lib/adapters/mcp-gateway). stdout is the MCP
// channel: everything this command logs goes to stderr. Run it with `npm run --silent` (npm's banner
// would corrupt stdout) or `npx tsx --conditions=react-server bin/quiesce.ts mcp-gateway …`.
import type { Command } from "./types";
import { parseFlags, requireFlag, UsageError } from "../../lib/cli/args";
import { adapterConfig, AdapterConfigError, envInt } from "../../lib/adapters/common/config";
import { makeClient } from "../../lib/adapters/common/control";
import { runGateway } from "../../lib/adapters/mcp-gateway/gateway";

const USAGE = "quiesce mcp-gateway --run <runId> [--lease <parentLeaseId>] [--task <taskId>] [--url <url>] [--key <key>] -- <server command> [args…]";

export const mcpGatewayCommand: Command = {
  summary: "stdio MCP gateway: proxies an MCP server's tools and gates every tools/call",
  usage: USAGE,
  async run(argv) {
    const sep = argv.indexOf("--");
    if (sep < 0 || sep === argv.length - 1) throw new UsageError("the upstream server command goes after `--`");
    const { values, positionals } = parseFlags(argv.slice(0, sep), {
      run: { type: "string" }, lease: { type: "string" }, task: { type: "string" },
      url: { type: "string" }, key: { type: "string" },
    });
    if (positionals.length) throw new UsageError(`unexpected argument: ${positionals[0]}`);
    const runId = requireFlag(values.run, "run");
    const [command, ...args] = argv.slice(sep + 1);
    let cfg;
    try {
      cfg = adapterConfig({ url: values.url, key: values.key });
    } catch (err) {
      if (err instanceof AdapterConfigError) throw new UsageError(err.message);
      throw err;
    }
    const client = makeClient(cfg, envInt(process.env, "QUIESCE_GATE_TIMEOUT_MS", 5000));
    return runGateway({
      cfg, client, parentRunId: runId, parentLeaseId: values.lease, taskId: values.task,
      command: command!, args,
      callTimeoutMs: envInt(process.env, "QUIESCE_MCP_CALL_TIMEOUT_MS", 3_600_000),
    });
  },
};
