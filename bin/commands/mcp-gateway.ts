// `quiesce mcp-gateway --run <id> [--lease <id>] [--task <id>] [--provider <name>] [--listen <host:port>] (-- <server command…> | --upstream-url <url>)`:
// a gated MCP server in front of an upstream MCP server (lib/agent/adapters/mcp-gateway). Toward the client:
// stdio (default) or Streamable HTTP (--listen, endpoint /mcp). Toward the upstream: a stdio command
// after `--`, or a Streamable HTTP endpoint (--upstream-url). --provider names the providers row (kind mcp)
// through which a stop asks the upstream about the tasks this gateway records (docs/design/mcp-tasks.md). On stdio, stdout is the MCP channel:
// everything this command logs goes to stderr. Run it with `npm run --silent` (npm's banner would
// corrupt stdout) or `node bin/quiesce-adapter.mjs mcp-gateway …`.
import type { Command } from "./types";
import { parseFlags, requireFlag, UsageError } from "../../lib/cli/args";
import { adapterSetup, splitWrappedCommand } from "../../lib/cli/adapter-command";
import { runGateway } from "../../lib/agent/adapters/mcp-gateway/gateway";
import { setting } from "../../lib/platform/config";

const USAGE =
  "quiesce mcp-gateway --run <runId> [--lease <parentLeaseId>] [--task <taskId>] [--provider <name>] [--listen <host:port>] [--url <url>] [--key <key>] " +
  "(-- <server command> [args…] | --upstream-url <http(s) URL>)";

function parseListen(v: string): { host: string; port: number } {
  const m = /^(.+):(\d{1,5})$/.exec(v.trim());
  const port = m ? Number(m[2]) : NaN;
  if (!m || port > 65535) throw new UsageError(`--listen: host:port, got "${v}"`);
  return { host: m[1]!.replace(/^\[(.*)\]$/, "$1"), port };
}

export const mcpGatewayCommand: Command = {
  summary: "MCP gateway (stdio or Streamable HTTP, both ways): proxies an MCP server's tools and gates every tools/call",
  usage: USAGE,
  async run(argv) {
    const hasCommand = argv.includes("--");
    const { flags, command, args } = hasCommand
      ? splitWrappedCommand(argv, "upstream server command")
      : { flags: argv, command: "", args: [] };
    const { values, positionals } = parseFlags(flags, {
      run: { type: "string" },
      lease: { type: "string" },
      task: { type: "string" },
      url: { type: "string" },
      key: { type: "string" },
      listen: { type: "string" },
      "upstream-url": { type: "string" },
      provider: { type: "string" },
    });
    if (positionals.length) throw new UsageError(`unexpected argument: ${positionals[0]}`);
    const runId = requireFlag(values.run, "run");
    const upstreamUrl = values["upstream-url"];
    if (upstreamUrl !== undefined) {
      if (hasCommand) throw new UsageError("give either --upstream-url or an upstream command after `--`, not both");
      try {
        const u = new URL(upstreamUrl);
        if (u.protocol !== "http:" && u.protocol !== "https:") throw new Error("not http(s)");
      } catch {
        throw new UsageError(`--upstream-url: an http(s) URL, got "${upstreamUrl}"`);
      }
    } else if (!hasCommand) {
      throw new UsageError("the upstream server command goes after `--` (or pass --upstream-url)");
    }
    const listen = values.listen === undefined ? undefined : parseListen(values.listen);
    const { cfg, client } = adapterSetup({ url: values.url, key: values.key });
    return runGateway({
      cfg,
      client,
      parentRunId: runId,
      parentLeaseId: values.lease,
      taskId: values.task,
      providerName: values.provider,
      command,
      args,
      upstreamUrl,
      listen,
      callTimeoutMs: setting("QUIESCE_MCP_CALL_TIMEOUT_MS"),
      approvalWaitMs: setting("QUIESCE_APPROVAL_WAIT_MS"),
    });
  },
};
