// The provider of kind "mcp" (docs/design/mcp-tasks.md): the MCP server that holds a task the gateway
// recorded (operations.provider_job_id = the task id). Cancel is `tasks/cancel`; the check is `tasks/get`
// read as the server's own state of the work:
//   completed            → effect present, final (the result's sha256 rides along as the receipt's detail)
//   cancelled            → the row's status_url effect check, when there is one; else "unavailable", final:
//                          the server says cancelled, and nobody can say whether the effect happened
//   failed               → "unavailable", final (unknown; a person reconciles)
//   working / input_required / no answer → "unavailable", not final: asked again until the deadline
// The server is reached at providers.endpoint: an http(s) URL (2026-07-28 when its server/discover lists
// it, else the SDK's Streamable HTTP client, 2025-11-25), or a stdio command given as a JSON array.
import "server-only";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { CancelTaskResultSchema, GetTaskResultSchema, McpError, ResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { canonicalJson, sha256Hex } from "../../../control/canonical";
import type { CancelAnswer, EffectAnswer, Provider, ProviderConfig, ProviderOperationRef } from "./types";

export const MCP_2026 = "2026-07-28";
const META = { version: "io.modelcontextprotocol/protocolVersion", caps: "io.modelcontextprotocol/clientCapabilities" } as const;
const TASKS_EXTENSION = "io.modelcontextprotocol/tasks";

/** One JSON-RPC exchange with the server: a request in, its result (or a JSON-RPC error thrown as McpError). */
type Ask = (method: string, params: Record<string, unknown>) => Promise<Record<string, unknown>>;

/** What tasks/get said, in the words of the evidence. */
export function sentenceOf(taskId: string, status: string, at: unknown): string {
  return `the MCP server reported task ${taskId} ${status}${typeof at === "string" ? ` at ${at}` : ""}`;
}

async function post2026(url: string, method: string, params: Record<string, unknown>, timeoutMs: number, name?: string) {
  const body = {
    jsonrpc: "2.0",
    id: 1,
    method,
    params: { ...params, _meta: { [META.version]: MCP_2026, [META.caps]: { extensions: { [TASKS_EXTENSION]: {} } } } },
  };
  const res = await fetch(url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": MCP_2026,
      "mcp-method": method,
      ...(name ? { "mcp-name": name } : {}),
    },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(timeoutMs),
  });
  const text = await res.text();
  // A JSON body, or an SSE stream whose last data line is the response.
  const lines = text.split("\n").filter((l) => l.startsWith("data:"));
  const msg = JSON.parse(lines.length ? lines[lines.length - 1]!.slice(5) : text) as {
    result?: Record<string, unknown>;
    error?: { code: number; message: string };
  };
  if (msg.error) throw new McpError(msg.error.code, msg.error.message);
  if (!res.ok || !msg.result) throw new Error(`HTTP ${res.status}`);
  return msg.result;
}

/** Runs `work` against the server, over the protocol version it speaks, and closes what it opened. */
async function withServer<T>(config: ProviderConfig, work: (ask: Ask, version: string) => Promise<T>): Promise<T> {
  const endpoint = config.endpoint ?? "";
  if (/^https?:\/\//.test(endpoint)) {
    const discovered = await post2026(endpoint, "server/discover", {}, config.timeoutMs).catch(() => null);
    const versions = (discovered?.supportedVersions ?? []) as unknown[];
    if (versions.includes(MCP_2026))
      return work((method, params) => post2026(endpoint, method, params, config.timeoutMs, params.taskId as string | undefined), MCP_2026);
  }
  let transport: Transport;
  if (/^https?:\/\//.test(endpoint)) transport = new StreamableHTTPClientTransport(new URL(endpoint));
  else {
    const argv = JSON.parse(endpoint || "[]") as unknown;
    if (!Array.isArray(argv) || argv.length === 0 || !argv.every((a) => typeof a === "string"))
      throw new Error("providers.endpoint: an http(s) URL or a JSON array command");
    transport = new StdioClientTransport({ command: argv[0] as string, args: argv.slice(1) as string[], stderr: "ignore" });
  }
  const client = new Client({ name: "quiesce-barrier-engine", version: "0.1.0" }, { capabilities: {} });
  try {
    await client.connect(transport, { timeout: config.timeoutMs });
    const opts = { timeout: config.timeoutMs };
    const ask: Ask = async (method, params) =>
      (await client.request(
        { method, params } as never,
        method === "tasks/get" ? GetTaskResultSchema : method === "tasks/cancel" ? CancelTaskResultSchema : ResultSchema,
        opts,
      )) as Record<string, unknown>;
    // The version the initialize handshake agreed (the HTTP transport keeps it; stdio does not say).
    const agreed = transport instanceof StreamableHTTPClientTransport ? transport.protocolVersion : undefined;
    return await work(ask, agreed ?? "initialize");
  } finally {
    await client.close().catch(() => {});
  }
}

const describe = (err: unknown) => (err instanceof McpError ? `JSON-RPC error ${err.code}: ${err.message}` : (err as Error).message);

export class McpProvider implements Provider {
  /** `effectCheck`: the row's status_url check (the generic HTTP protocol), asked when the server says cancelled. */
  constructor(
    readonly config: ProviderConfig,
    private readonly effectCheck: (op: ProviderOperationRef) => Promise<EffectAnswer>,
  ) {}

  /** MCP defines no way to undo a finished task: a person records the recovery (docs/evidence.md#recovery). */
  async requestCompensation(): Promise<CancelAnswer> {
    return { response: "unsupported", detail: { reason: "MCP defines no compensation for a finished task" } };
  }

  async requestCancel(op: ProviderOperationRef): Promise<CancelAnswer> {
    if (!op.providerJobId) return { response: "unsupported", detail: { reason: "no task id was recorded for this call" } };
    const taskId = op.providerJobId;
    try {
      return await withServer(this.config, async (ask, version) => {
        try {
          await ask("tasks/cancel", { taskId });
          return { response: "accepted" as const, detail: { method: "tasks/cancel", taskId, version } };
        } catch (err) {
          // A task already terminal (or unknown) cannot be cancelled: what it is, the check reads.
          if (err instanceof McpError)
            return { response: "rejected" as const, detail: { method: "tasks/cancel", taskId, error: describe(err) } };
          throw err;
        }
      });
    } catch (err) {
      return { response: "unreachable", detail: { method: "tasks/cancel", taskId, error: describe(err) } };
    }
  }

  async checkEffect(op: ProviderOperationRef): Promise<EffectAnswer> {
    if (!op.providerJobId) return { effect: "unavailable", final: false, detail: { reason: "no task id was recorded for this call" } };
    const taskId = op.providerJobId;
    let read: { task: Record<string, unknown>; result: unknown; version: string };
    try {
      read = await withServer(this.config, async (ask, version) => {
        const got = await ask("tasks/get", { taskId });
        // 2025-11-25 answers the Task itself; 2026-07-28 a DetailedTask (result inline when completed).
        const task = (got.task as Record<string, unknown> | undefined) ?? got;
        let result: unknown = task.result;
        if (task.status === "completed" && result === undefined && version !== MCP_2026) result = await ask("tasks/result", { taskId });
        return { task, result, version };
      });
    } catch (err) {
      const said =
        err instanceof McpError
          ? `the MCP server answered tasks/get for task ${taskId} with error ${err.code}`
          : `the MCP server did not answer tasks/get for task ${taskId}`;
      return { effect: "unavailable", final: false, detail: { said, reason: describe(err), taskId } };
    }
    const { task, result, version } = read;
    const status = String(task.status);
    const at = task.lastUpdatedAt;
    const said = sentenceOf(taskId, status, at);
    const base = { taskId, status, statusMessage: task.statusMessage ?? null, said, version };
    if (status === "completed") {
      const { _meta: _m, ...payload } = (result ?? {}) as Record<string, unknown>;
      return {
        effect: "present",
        final: true,
        providerOperationId: taskId,
        committedAt: typeof at === "string" ? at : null,
        detail: { ...base, resultDigest: `sha256:${sha256Hex(canonicalJson(payload))}`, isError: payload.isError === true },
      };
    }
    if (status === "cancelled") {
      if (this.config.statusUrl) {
        const check = await this.effectCheck(op);
        return { ...check, detail: { ...base, effectCheck: check.detail ?? null } };
      }
      return { effect: "unavailable", final: true, detail: { ...base, reason: "the server says cancelled; no effect check" } };
    }
    if (status === "failed") return { effect: "unavailable", final: true, detail: { ...base, reason: "the server says the task failed" } };
    return { effect: "unavailable", final: false, detail: { ...base, reason: `the task is still ${status}` } };
  }
}
