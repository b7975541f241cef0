// `quiesce mcp-gateway --run <id> [--lease <id>] [--task <id>] -- <server command…>`: a gated stdio MCP
// server in front of an upstream stdio MCP server (lib/adapters/mcp-gateway). stdout is the MCP
// channel: everything this command logs goes to stderr. Run it with `npm run --silent` (npm's banner
// would corrupt stdout) or `npx tsx --conditions=react-server bin/quiesce.ts mcp-gateway …`.
import type { Command } from "./types";
import { parseFlags, requireFlag, UsageError } from "../../lib/cli/args";
import { adapterSetup, splitWrappedCommand } from "../../lib/cli/adapter-command";
import { runGateway } from "../../lib/adapters/mcp-gateway/gateway";
import { setting } from "../../lib/config";

const USAGE = "quiesce mcp-gateway --run <runId> [--lease <parentLeaseId>] [--task <taskId>] [--url <url>] [--key <key>] -- <server command> [args…]";

export const mcpGatewayCommand: Command = {
  summary: "stdio MCP gateway: proxies an MCP server's tools and gates every tools/call",
  usage: USAGE,
  async run(argv) {
    const { flags, command, args } = splitWrappedCommand(argv, "upstream server command");
    const { values, positionals } = parseFlags(flags, {
      run: { type: "string" }, lease: { type: "string" }, task: { type: "string" },
      url: { type: "string" }, key: { type: "string" },
    });
    if (positionals.length) throw new UsageError(`unexpected argument: ${positionals[0]}`);
    const runId = requireFlag(values.run, "run");
    const { cfg, client } = adapterSetup({ url: values.url, key: values.key });
    return runGateway({
      cfg, client, parentRunId: runId, parentLeaseId: values.lease, taskId: values.task, command, args,
      callTimeoutMs: setting("QUIESCE_MCP_CALL_TIMEOUT_MS"),
    });
  },
};
