// The gateway toward a 2026-07-28 client over Streamable HTTP (docs/design/mcp-tasks.md): stateless, no
// initialize and no session; every request carries its version and capabilities in _meta, and results
// carry resultType. Recognised by the MCP-Protocol-Version header (or a server/discover probe). A call's
// response is an SSE stream; the client closing it is the call's cancellation (the gateway then cancels
// upstream the way the upstream's own version defines). The tasks extension is offered when the upstream
// speaks 2026-07-28 and runs tasks; the handles and tasks/get / tasks/cancel are passed through.
import type http from "node:http";
import {
  McpError,
  SUPPORTED_PROTOCOL_VERSIONS,
  type CallToolRequest,
  type CallToolResult,
  type CreateTaskResult,
  type Task,
} from "@modelcontextprotocol/sdk/types.js";
import { MCP_2026, type Upstream } from "./upstream";

const META_CAPS = "io.modelcontextprotocol/clientCapabilities";
const META_INFO = "io.modelcontextprotocol/clientInfo";
const TASKS_EXTENSION = "io.modelcontextprotocol/tasks";

export interface StatelessCall {
  requestId: string | number;
  signal: AbortSignal;
  notify: (n: { method: "notifications/progress"; params: Record<string, unknown> }) => Promise<void>;
}

export interface StatelessDeps {
  upstream: Upstream;
  instructions: string | undefined;
  call: (params: CallToolRequest["params"], c: StatelessCall) => Promise<CallToolResult | CreateTaskResult>;
  log: (m: string) => void;
}

type Msg = { jsonrpc?: string; id?: string | number; method?: string; params?: Record<string, unknown> };

export function isStateless(req: http.IncomingMessage, body: unknown): boolean {
  return req.headers["mcp-protocol-version"] === MCP_2026 || (body as Msg | undefined)?.method === "server/discover";
}

const wireTask = (t: Task) => ({
  taskId: t.taskId,
  status: t.status,
  ...(t.statusMessage ? { statusMessage: t.statusMessage } : {}),
  createdAt: t.createdAt,
  lastUpdatedAt: t.lastUpdatedAt,
  ttlMs: t.ttl ?? null,
  ...(t.pollInterval !== undefined ? { pollIntervalMs: t.pollInterval } : {}),
});

export function statelessHandler(d: StatelessDeps) {
  const clients = new Set<string>();
  const tasks = d.upstream.tasks && d.upstream.version === MCP_2026;
  return async (body: unknown, _req: http.IncomingMessage, res: http.ServerResponse): Promise<void> => {
    const msg = (body ?? {}) as Msg;
    const json = (payload: unknown): void => void res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(payload));
    const reply = (result: Record<string, unknown>) => json({ jsonrpc: "2.0", id: msg.id, result: { resultType: "complete", ...result } });
    const fail = (code: number, message: string) => json({ jsonrpc: "2.0", id: msg.id ?? null, error: { code, message } });
    if (msg.id === undefined) return void res.writeHead(202).end(); // a notification: nothing to answer
    const { _meta: meta = {}, ...params } = (msg.params ?? {}) as Record<string, unknown> & { _meta?: Record<string, unknown> };
    const who = String((meta[META_INFO] as { name?: unknown } | undefined)?.name ?? "unnamed client");
    if (!clients.has(who)) {
      clients.add(who);
      d.log(`client ${who} speaks MCP ${MCP_2026} (stateless)`);
    }
    try {
      switch (msg.method) {
        case "server/discover":
          return reply({
            supportedVersions: [MCP_2026, ...SUPPORTED_PROTOCOL_VERSIONS],
            capabilities: { tools: {}, ...(tasks ? { extensions: { [TASKS_EXTENSION]: {} } } : {}) },
            serverInfo: { name: "quiesce-mcp-gateway", version: "0.1.0" },
            ...(d.instructions ? { instructions: d.instructions } : {}),
          });
        case "tools/list": {
          const r = await d.upstream.listTools(params, AbortSignal.timeout(60_000));
          return reply({ ...r, ttlMs: 0, cacheScope: "private" });
        }
        case "tools/call": {
          const wantsTask =
            tasks && !!(meta[META_CAPS] as { extensions?: Record<string, unknown> } | undefined)?.extensions?.[TASKS_EXTENSION];
          const progressToken = meta.progressToken;
          const closed = new AbortController();
          res.on("close", () => {
            if (!res.writableEnded) closed.abort(new Error("the client closed the request's stream"));
          });
          res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
          res.flushHeaders();
          const send = (m: unknown) => res.write(`event: message\ndata: ${JSON.stringify(m)}\n\n`);
          try {
            const r = await d.call(
              {
                ...(params as CallToolRequest["params"]),
                ...(progressToken !== undefined ? { _meta: { progressToken: progressToken as string | number } } : {}),
                ...(wantsTask ? { task: {} } : {}),
              },
              {
                requestId: msg.id,
                signal: closed.signal,
                notify: async (n) => {
                  if (!res.writableEnded && !closed.signal.aborted) send({ jsonrpc: "2.0", method: n.method, params: n.params });
                },
              },
            );
            if (closed.signal.aborted) return;
            const task = (r as Partial<CreateTaskResult>).task;
            const result = task ? { resultType: "task", ...wireTask(task) } : { resultType: "complete", ...r };
            send({ jsonrpc: "2.0", id: msg.id, result });
          } catch (err) {
            if (!closed.signal.aborted)
              send({
                jsonrpc: "2.0",
                id: msg.id,
                error: { code: err instanceof McpError ? err.code : -32603, message: (err as Error).message },
              });
          }
          res.end();
          return;
        }
        case "tasks/get": {
          if (!tasks) return fail(-32601, "method not found: tasks/get");
          const s = await d.upstream.getTask(String(params.taskId));
          return reply({ ...wireTask(s.task), ...(s.result ? { result: s.result } : {}), ...(s.error ? { error: s.error } : {}) });
        }
        case "tasks/cancel":
          if (!tasks) return fail(-32601, "method not found: tasks/cancel");
          await d.upstream.cancelTask(String(params.taskId));
          return reply({});
        default:
          return fail(-32601, `method not found: ${msg.method}`);
      }
    } catch (err) {
      if (!res.headersSent) fail(err instanceof McpError ? err.code : -32603, (err as Error).message);
    }
  };
}
