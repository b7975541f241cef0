// The gateway's upstream, whatever protocol version it speaks (docs/design/mcp-tasks.md):
//   2025-11-25 and older — the SDK's Client (stdio or Streamable HTTP); a plain call is cancelled by
//     notifications/cancelled (the SDK sends it when the call's signal aborts), a task by tasks/cancel;
//   2026-07-28 over Streamable HTTP (chosen when the server's server/discover lists it) — stateless
//     requests written here from the specification: every request carries its version and capabilities
//     in _meta, a task is the tasks extension's (resultType "task"), and a plain call is cancelled by
//     closing its response stream: no notifications/cancelled is ever sent.
// Tasks reach the gateway in the 2025-11-25 shape ({ task: Task }, Task with ttl / pollInterval) whichever
// version the upstream speaks.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  CallToolResultSchema,
  CancelTaskResultSchema,
  CreateTaskResultSchema,
  GetTaskResultSchema,
  ListTasksResultSchema,
  McpError,
  ToolListChangedNotificationSchema,
  type CallToolRequest,
  type CallToolResult,
  type CreateTaskResult,
  type ListToolsResult,
  type Task,
} from "@modelcontextprotocol/sdk/types.js";
import { sleep } from "../../../platform/wait";

export const MCP_2026 = "2026-07-28";
const META_VERSION = "io.modelcontextprotocol/protocolVersion";
const META_CAPS = "io.modelcontextprotocol/clientCapabilities";
const TASKS_EXTENSION = "io.modelcontextprotocol/tasks";

export interface CallOptions {
  signal: AbortSignal;
  timeout: number;
  onprogress?: (p: { progress: number; total?: number; message?: string }) => void;
}

/** A task's state as the upstream reports it; `result` / `error` once terminal, when the upstream gives them. */
export interface TaskState {
  task: Task;
  result?: CallToolResult;
  error?: unknown;
}

export interface Upstream {
  /** The protocol version negotiated with the upstream. */
  readonly version: string;
  readonly name: string | undefined;
  readonly instructions: string | undefined;
  /** The upstream runs tools/call as tasks. */
  readonly tasks: boolean;
  listTools(params: Record<string, unknown> | undefined, signal: AbortSignal): Promise<ListToolsResult>;
  /** A plain call answers its result; a call with params.task answers { task } (the 2025-11-25 CreateTaskResult). */
  callTool(params: CallToolRequest["params"], o: CallOptions): Promise<CallToolResult | CreateTaskResult>;
  getTask(taskId: string, signal?: AbortSignal): Promise<TaskState>;
  cancelTask(taskId: string): Promise<void>;
  /** The finished task's result (2025-11-25 tasks/result blocks until then; 2026-07-28 is polled). */
  taskResult(taskId: string, signal: AbortSignal): Promise<Record<string, unknown>>;
  listTasks(cursor: string | undefined): Promise<{ tasks: Task[]; nextCursor?: string }>;
  onToolListChanged(handler: () => void): void;
  onclose?: () => void;
  close(): Promise<void>;
}

export interface UpstreamTarget {
  command: string;
  args: string[];
  env: Record<string, string>;
  url?: string;
  /** Ask for 2026-07-28 (default true); false keeps the SDK's versions. */
  try2026?: boolean;
}

export async function connectUpstream(t: UpstreamTarget): Promise<Upstream> {
  if (t.url && t.try2026 !== false) {
    const u = await Upstream2026.discover(t.url);
    if (u) return u;
  }
  return SdkUpstream.connect(t);
}

const isTerminal = (s: string) => s === "completed" || s === "failed" || s === "cancelled";

// ── 2025-11-25 and older: the SDK's Client ──
class SdkUpstream implements Upstream {
  onclose?: () => void;
  private constructor(
    private readonly client: Client,
    readonly version: string,
  ) {
    client.onclose = () => this.onclose?.();
  }

  static async connect(t: UpstreamTarget): Promise<SdkUpstream> {
    const client = new Client({ name: "quiesce-mcp-gateway", version: "0.1.0" }, { capabilities: {} });
    const inner: Transport = t.url
      ? new StreamableHTTPClientTransport(new URL(t.url))
      : new StdioClientTransport({ command: t.command, args: t.args, env: t.env, stderr: "inherit" });
    let version = "unknown";
    // The SDK does not expose the version it negotiated: read it from the initialize answer.
    const sniffed: Transport = {
      start: () => inner.start(),
      send: (m, o) => inner.send(m, o),
      close: () => inner.close(),
      get sessionId() {
        return inner.sessionId;
      },
      setProtocolVersion: (v) => inner.setProtocolVersion?.(v),
      set onmessage(h: Transport["onmessage"]) {
        inner.onmessage = h
          ? (m, e) => {
              const r = (m as { result?: { protocolVersion?: unknown } }).result;
              if (typeof r?.protocolVersion === "string" && version === "unknown") version = r.protocolVersion;
              h(m, e);
            }
          : undefined;
      },
      get onmessage(): Transport["onmessage"] {
        return inner.onmessage;
      },
      set onclose(h) {
        inner.onclose = h;
      },
      get onclose() {
        return inner.onclose;
      },
      set onerror(h) {
        inner.onerror = h;
      },
      get onerror() {
        return inner.onerror;
      },
    };
    await client.connect(sniffed);
    return new SdkUpstream(client, version);
  }

  get name() {
    return this.client.getServerVersion()?.name;
  }
  get instructions() {
    return this.client.getInstructions();
  }
  get tasks() {
    return !!this.client.getServerCapabilities()?.tasks?.requests?.tools?.call;
  }
  listTools(params: Record<string, unknown> | undefined, signal: AbortSignal) {
    return this.client.listTools(params, { signal });
  }
  async callTool(params: CallToolRequest["params"], o: CallOptions) {
    const opts = {
      signal: o.signal,
      timeout: o.timeout,
      ...(o.onprogress ? { resetTimeoutOnProgress: true, onprogress: o.onprogress } : {}),
    };
    if (params.task) return this.client.request({ method: "tools/call", params }, CreateTaskResultSchema, opts);
    return (await this.client.request({ method: "tools/call", params }, CallToolResultSchema, opts)) as CallToolResult;
  }
  async getTask(taskId: string, signal?: AbortSignal): Promise<TaskState> {
    const { _meta: _m, ...task } = await this.client.request({ method: "tasks/get", params: { taskId } }, GetTaskResultSchema, { signal });
    if (task.status !== "completed") return { task };
    const result = (await this.client.request({ method: "tasks/result", params: { taskId } }, CallToolResultSchema, {
      signal,
    })) as CallToolResult;
    return { task, result };
  }
  async cancelTask(taskId: string) {
    await this.client.request({ method: "tasks/cancel", params: { taskId } }, CancelTaskResultSchema);
  }
  async taskResult(taskId: string, signal: AbortSignal) {
    return this.client.request({ method: "tasks/result", params: { taskId } }, CallToolResultSchema.loose(), {
      signal,
      timeout: 2 ** 31 - 1,
    });
  }
  listTasks(cursor: string | undefined) {
    return this.client.request({ method: "tasks/list", params: cursor ? { cursor } : {} }, ListTasksResultSchema);
  }
  onToolListChanged(handler: () => void) {
    this.client.setNotificationHandler(ToolListChangedNotificationSchema, async () => handler());
  }
  close() {
    return this.client.close();
  }
}

// ── 2026-07-28 over Streamable HTTP, from the specification ──
type Rpc = { result?: Record<string, unknown>; error?: { code: number; message: string; data?: unknown } };

class Upstream2026 implements Upstream {
  readonly version = MCP_2026;
  readonly tasks: boolean;
  readonly instructions: string | undefined;
  onclose?: () => void;
  private nextId = 1;
  private readonly closing = new AbortController();

  private constructor(
    private readonly url: string,
    discovered: Record<string, unknown>,
  ) {
    const caps = (discovered.capabilities ?? {}) as { extensions?: Record<string, unknown> };
    this.tasks = !!caps.extensions?.[TASKS_EXTENSION];
    this.name = (discovered.serverInfo as { name?: string } | undefined)?.name;
    this.instructions = typeof discovered.instructions === "string" ? discovered.instructions : undefined;
  }
  readonly name: string | undefined;

  /** server/discover: the upstream speaks 2026-07-28 only if it says so; anything else is an older server. */
  static async discover(url: string): Promise<Upstream2026 | null> {
    const probe = new Upstream2026(url, {});
    try {
      const r = await probe.post("server/discover", {}, { signal: AbortSignal.timeout(10_000) });
      const versions = (r.supportedVersions ?? []) as unknown[];
      return versions.includes(MCP_2026) ? new Upstream2026(url, r) : null;
    } catch {
      return null;
    }
  }

  /**
   * One request, one POST; its answer is JSON or an SSE stream of related notifications ending with the
   * response. Aborting `signal` closes the stream, which is this version's cancellation over HTTP.
   */
  private async post(
    method: string,
    params: Record<string, unknown>,
    o: { signal?: AbortSignal; tasks?: boolean; onprogress?: CallOptions["onprogress"] } = {},
  ) {
    const id = this.nextId++;
    const { _meta, ...rest } = params as { _meta?: Record<string, unknown> };
    const body = {
      jsonrpc: "2.0",
      id,
      method,
      params: {
        ...rest,
        _meta: {
          ...(_meta ?? {}),
          ...(o.onprogress ? { progressToken: id } : {}),
          [META_VERSION]: MCP_2026,
          [META_CAPS]: o.tasks ? { extensions: { [TASKS_EXTENSION]: {} } } : {},
          "io.modelcontextprotocol/clientInfo": { name: "quiesce-mcp-gateway", version: "0.1.0" },
        },
      },
    };
    const name = typeof params.taskId === "string" ? params.taskId : typeof params.name === "string" ? params.name : undefined;
    const signal = AbortSignal.any([this.closing.signal, ...(o.signal ? [o.signal] : [])]);
    const res = await fetch(this.url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-protocol-version": MCP_2026,
        "mcp-method": method,
        ...(name ? { "mcp-name": name } : {}),
      },
      body: JSON.stringify(body),
      signal,
    });
    if (!res.ok) throw new McpError(-32000, `upstream answered HTTP ${res.status}`);
    let msg: Rpc | undefined;
    if ((res.headers.get("content-type") ?? "").includes("text/event-stream")) {
      const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
      let buf = "";
      while (!msg) {
        const { value, done } = await reader.read();
        if (done) break;
        buf += value;
        let cut: number;
        while ((cut = buf.indexOf("\n\n")) >= 0) {
          const event = buf.slice(0, cut);
          buf = buf.slice(cut + 2);
          const data = event
            .split("\n")
            .filter((l) => l.startsWith("data:"))
            .map((l) => l.slice(5).trim())
            .join("\n");
          if (!data) continue;
          const m = JSON.parse(data) as Rpc & { id?: unknown; method?: string; params?: Record<string, unknown> };
          if (m.id === id) msg = m;
          else if (m.method === "notifications/progress" && o.onprogress) {
            const { progress, total, message } = m.params as { progress: number; total?: number; message?: string };
            o.onprogress({ progress, total, message });
          }
        }
      }
      await reader.cancel().catch(() => {});
    } else msg = (await res.json()) as Rpc;
    if (!msg) throw new McpError(-32000, "the upstream's response stream ended without an answer");
    if (msg.error) throw new McpError(msg.error.code, msg.error.message, msg.error.data);
    return msg.result ?? {};
  }

  async listTools(params: Record<string, unknown> | undefined, signal: AbortSignal) {
    const { resultType: _r, ttlMs: _t, cacheScope: _c, ...rest } = await this.post("tools/list", params ?? {}, { signal });
    return rest as ListToolsResult;
  }

  async callTool(params: CallToolRequest["params"], o: CallOptions) {
    const { task, ...rest } = params;
    // The timeout ends the wait the same way a kill does: by closing the stream.
    const signal = AbortSignal.any([o.signal, AbortSignal.timeout(o.timeout)]);
    const r = await this.post("tools/call", rest, { signal, tasks: !!task && this.tasks, onprogress: o.onprogress });
    const { resultType, ...result } = r;
    if (resultType === "task") return { task: toTask(result) } as CreateTaskResult;
    return result as CallToolResult;
  }

  async getTask(taskId: string, signal?: AbortSignal): Promise<TaskState> {
    const r = await this.post("tasks/get", { taskId }, { signal });
    return { task: toTask(r), result: r.result as CallToolResult | undefined, error: r.error };
  }

  async cancelTask(taskId: string) {
    await this.post("tasks/cancel", { taskId });
  }

  async taskResult(taskId: string, signal: AbortSignal) {
    for (;;) {
      const s = await this.getTask(taskId, signal);
      if (s.task.status === "completed") return (s.result ?? {}) as Record<string, unknown>;
      if (isTerminal(s.task.status)) throw new McpError(-32000, `task ${taskId} ${s.task.status}`, s.error);
      await sleep(Math.min(5000, s.task.pollInterval ?? 1000), signal);
    }
  }

  async listTasks(): Promise<{ tasks: Task[] }> {
    return { tasks: [] }; // 2026-07-28 has no tasks/list
  }

  onToolListChanged() {
    // Change notifications arrive only on a subscriptions/listen stream, which the gateway does not open.
  }

  async close() {
    this.closing.abort();
    this.onclose = undefined;
  }
}

/** A 2026-07-28 task (ttlMs / pollIntervalMs) in the 2025-11-25 shape (ttl / pollInterval). */
function toTask(r: Record<string, unknown>): Task {
  return {
    taskId: String(r.taskId),
    status: r.status as Task["status"],
    ...(typeof r.statusMessage === "string" ? { statusMessage: r.statusMessage } : {}),
    createdAt: String(r.createdAt),
    lastUpdatedAt: String(r.lastUpdatedAt ?? r.createdAt),
    ttl: (r.ttlMs as number | null | undefined) ?? null,
    ...(typeof r.pollIntervalMs === "number" ? { pollInterval: r.pollIntervalMs } : {}),
  };
}
