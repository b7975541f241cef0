// `quiesce a2a-gateway --run <id> --upstream <url> [--lease <id>] [--task <id>] [--provider <name>] [--listen <host:port>]`:
// a gated HTTP proxy in front of a remote A2A agent (lib/agent/adapters/a2a-gateway): every message that
// starts work asks the gate, the agent's task is recorded on the operation (--provider names the providers
// row, kind a2a, through which a stop asks the agent), and a kill sends CancelTask (docs/design/mcp-tasks.md).
import type { Command } from "./types";
import { parseFlags, requireFlag, UsageError } from "../../lib/cli/args";
import { adapterSetup } from "../../lib/cli/adapter-command";
import { runA2aGateway } from "../../lib/agent/adapters/a2a-gateway/gateway";

const USAGE =
  "quiesce a2a-gateway --run <runId> --upstream <agent JSON-RPC URL> [--lease <parentLeaseId>] [--task <taskId>] [--provider <name>] " +
  "[--listen <host:port>] [--url <url>] [--key <key>]";

export const a2aGatewayCommand: Command = {
  summary: "A2A gateway: a proxy in front of a remote agent that gates every message that starts work and cancels its tasks on a kill",
  usage: USAGE,
  async run(argv) {
    const { values, positionals } = parseFlags(argv, {
      run: { type: "string" },
      upstream: { type: "string" },
      lease: { type: "string" },
      task: { type: "string" },
      provider: { type: "string" },
      listen: { type: "string" },
      url: { type: "string" },
      key: { type: "string" },
    });
    if (positionals.length) throw new UsageError(`unexpected argument: ${positionals[0]}`);
    const runId = requireFlag(values.run, "run");
    const upstreamUrl = requireFlag(values.upstream, "upstream");
    try {
      const u = new URL(upstreamUrl);
      if (u.protocol !== "http:" && u.protocol !== "https:") throw new Error("not http(s)");
    } catch {
      throw new UsageError(`--upstream: an http(s) URL, got "${upstreamUrl}"`);
    }
    const m = /^(.+):(\d{1,5})$/.exec((values.listen ?? "127.0.0.1:0").trim());
    if (!m || Number(m[2]) > 65535) throw new UsageError(`--listen: host:port, got "${values.listen}"`);
    const { cfg, client } = adapterSetup({ url: values.url, key: values.key });
    return runA2aGateway({
      cfg,
      client,
      parentRunId: runId,
      parentLeaseId: values.lease,
      taskId: values.task,
      upstreamUrl,
      providerName: values.provider,
      listen: { host: m[1]!.replace(/^\[(.*)\]$/, "$1"), port: Number(m[2]) },
    });
  },
};
