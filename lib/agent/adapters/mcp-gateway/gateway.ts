// `quiesce mcp-gateway --run <id> -- <server command…>`: a stdio MCP server (the SDK's Server) in front
// of an upstream stdio MCP server (the SDK's Client). tools/list is proxied; every tools/call asks the
// gate first (operationId "mcp-<gateway instance>-<JSON-RPC request id>"):
//   allow → forwarded; the outcome is reported (succeeded / failed, or aborted_unknown)
//   hold  → waits and asks again (capped backoff, woken by control events), until allowed, denied,
//           or the caller cancels; a call awaiting a person's approval waits for the answer up to
//           approvalWaitMs, then is refused
//   deny, or no answer from the control plane → an isError tool result; nothing reaches upstream
// A kill while calls run cancels them the way the upstream's protocol version defines
// (docs/design/mcp-tasks.md): notifications/cancelled (stdio, and HTTP before 2026-07-28), closing the
// request's stream (2026-07-28 over HTTP), tasks/cancel for a task; each is recorded aborted_unknown
// unless the upstream's answer had already arrived.
// Tasks: a tools/call the client augments with `task` is passed through; the task id is recorded on
// the operation (with --provider, so a stop's provider check can ask the upstream itself), the
// operation stays running until tasks/get says the task is terminal, and tasks/get, tasks/result,
// tasks/list and tasks/cancel are relayed. Each session's negotiated protocol version is logged.
// Transports: toward the client stdio (default) or Streamable HTTP (`listen`: one MCP session per
// client, or stateless requests from a 2026-07-28 client: stateless.ts); toward the upstream a stdio
// command or a Streamable HTTP URL (`upstreamUrl`; 2026-07-28 when it offers it: upstream.ts). Upstream
// progress notifications are relayed with the client's own progress token, a call held by a pause
// sends progress while it waits, tools/list_changed is relayed to every client, and results are
// adapted to the protocol version each client negotiated (content.ts).
import { randomBytes, randomUUID } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  CallToolRequestSchema,
  CancelTaskRequestSchema,
  ErrorCode,
  GetTaskPayloadRequestSchema,
  GetTaskRequestSchema,
  isInitializeRequest,
  ListTasksRequestSchema,
  ListToolsRequestSchema,
  McpError,
  type CallToolRequest,
  type CallToolResult,
  type CreateTaskResult,
} from "@modelcontextprotocol/sdk/types.js";
import { createHash } from "node:crypto";
import { canonicalJson } from "../../../control/canonical";
import { connectUpstream, MCP_2026 } from "./upstream";
import { isStateless, statelessHandler } from "./stateless";
import { adaptResult, negotiatedVersion } from "./content";
import { subscribe } from "../../sdk/events";
import type { QuiesceClient } from "../../sdk/client";
import type { AdapterConfig } from "../common/config";
import { describeError, QuiesceApiError, reasonText } from "../common/control";
import { callArguments } from "../../sdk/arguments";
import { Doorbell, sleep } from "../../../platform/wait";
import { askGate } from "../../sdk/hold";
import { Inflight, type InflightCall } from "./inflight";
import { refusalResult } from "./results";

export interface GatewayOptions {
  cfg: AdapterConfig;
  client: QuiesceClient;
  parentRunId: string;
  parentLeaseId?: string;
  taskId?: string;
  /** The providers row (kind mcp) through which a stop asks the upstream about the tasks recorded here. */
  providerName?: string;
  /** Upstream stdio server (command + args), or … */
  command: string;
  args: string[];
  /** … an upstream Streamable HTTP endpoint (then command is ignored). */
  upstreamUrl?: string;
  /** Serve clients over Streamable HTTP on this host:port instead of stdio (port 0: any free port). */
  listen?: { host: string; port: number };
  /** Called with the HTTP endpoint once listening. */
  onListening?: (url: string) => void;
  /** How long a call waits for a person's approval before it is refused; default: no limit. */
  approvalWaitMs?: number;
  /** Upstream call timeout (the caller's own cancellation still applies). */
  callTimeoutMs?: number;
  /** Safety-net re-check of running calls while the event stream may be down. */
  recheckMs?: number;
  /** Downstream transport; default stdio. */
  transport?: Transport;
  log?: (m: string) => void;
}

/** Where a tools/call came from: a client session (the SDK's Server) or a stateless 2026-07-28 request. */
interface CallContext {
  requestId: string | number;
  /** Keeps operation ids apart between client sessions / stateless requests. */
  tag: string;
  signal: AbortSignal;
  notify: (n: { method: "notifications/progress"; params: Record<string, unknown> }) => Promise<void>;
  version: () => string;
}

interface RunBinding {
  runId: string;
  leaseId: string;
  epoch: number;
}

/** Environment for the upstream: ours minus the Quiesce credentials (the upstream is not trusted with them). */
function upstreamEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v !== undefined && k !== "QUIESCE_API_KEY" && k !== "QUIESCE_API_KEY_FILE") env[k] = v;
  }
  return env;
}

function outcomeUnknown(err: unknown): boolean {
  if (!(err instanceof McpError)) return true;
  return err.code === ErrorCode.ConnectionClosed || err.code === ErrorCode.RequestTimeout;
}

export async function runGateway(o: GatewayOptions): Promise<number> {
  const log = o.log ?? ((m: string) => process.stderr.write(`quiesce mcp-gateway: ${m}\n`));
  const instanceId = randomBytes(6).toString("base64url");
  const stop = new AbortController();
  const doorbell = new Doorbell();
  const inflight = new Inflight(o.client, log);

  const upstream = await connectUpstream({ command: o.command, args: o.args, env: upstreamEnv(), url: o.upstreamUrl });
  log(
    `upstream ${upstream.name ?? o.upstreamUrl ?? path.basename(o.command)} negotiated MCP ${upstream.version}${upstream.tasks ? " (tasks)" : ""}`,
  );

  // ── the gateway's own child run, registered under --run ──
  let binding: Promise<RunBinding> | null = null;
  const ensureRun = (): Promise<RunBinding> => {
    binding ??= (async () => {
      const r = await o.client.createRun({
        taskId: o.taskId ?? `mcp-gateway:${o.parentRunId}`,
        title: `MCP gateway → ${upstream.name ?? o.upstreamUrl ?? path.basename(o.command)}`,
        harness: "mcp",
        parentRunId: o.parentRunId,
        ...(o.parentLeaseId ? { parentLeaseId: o.parentLeaseId } : {}),
        native: { sessionId: `mcp-gateway-${instanceId}` },
      });
      const b = { runId: r.runId, leaseId: r.leaseId, epoch: r.epoch };
      log(`registered run ${b.runId} under ${o.parentRunId}`);
      void watch(b.runId);
      return b;
    })().catch((err) => {
      binding = null; // retried at the next call; meanwhile every call is denied
      throw err;
    });
    return binding;
  };

  // Control events are wake-up calls: re-check running calls, wake held ones.
  const watch = async (runId: string) => {
    try {
      await subscribe(
        { url: o.cfg.url, apiKey: o.cfg.apiKey },
        runId,
        () => {
          eventSeq++;
          doorbell.ring();
          void inflight.check();
        },
        stop.signal,
        { onDisconnect: (e) => log(`event stream: ${e.message}; reconnecting`) },
      );
    } catch (err) {
      if (!stop.signal.aborted) log(`event stream unavailable (${describeError(err)}); relying on periodic re-checks`);
    }
  };
  let eventSeq = 0;
  const tick = setInterval(() => {
    if (inflight.size > 0) void inflight.check();
  }, o.recheckMs ?? 5000);

  /**
   * A task the upstream runs for an allowed call: its id is recorded on the operation, a kill (or a stop
   * of the gateway's run) sends tasks/cancel, and tasks/get is polled until the task is terminal, which
   * is reported as the operation's outcome (after a kill, the holder's claim; the provider settles).
   */
  const followTask = async (
    call: InflightCall,
    taskId: string,
    b: RunBinding,
    report: (
      o: "succeeded" | "failed" | "aborted_unknown",
      d: Record<string, unknown>,
      e?: { providerOperationId: string; detail: unknown },
    ) => Promise<void>,
  ) => {
    log(`${call.tool} (${call.operationId}) runs as upstream task ${taskId}`);
    if (o.providerName)
      await o.client
        .recordProvider(call.operationId, { providerName: o.providerName, providerJobId: taskId })
        .catch((err) => log(`could not record task ${taskId} on ${call.operationId}: ${describeError(err)}`));
    let cancelled = false;
    call.ctrl.signal.addEventListener(
      "abort",
      () => {
        cancelled = true;
        log(`cancelling task ${taskId} upstream (tasks/cancel): ${call.abortReason ?? "aborted"}`);
        upstream.cancelTask(taskId).catch((err) => log(`tasks/cancel ${taskId}: ${describeError(err)}`));
      },
      { once: true },
    );
    try {
      while (!stop.signal.aborted) {
        let state;
        try {
          state = await upstream.getTask(taskId, stop.signal);
        } catch (err) {
          if (stop.signal.aborted) break;
          log(`tasks/get ${taskId}: ${describeError(err)}`);
          await sleep(2000, undefined, stop.signal).catch(() => {});
          continue;
        }
        const { status, lastUpdatedAt, pollInterval } = state.task;
        if (status === "completed" || status === "failed" || status === "cancelled") {
          call.answered = true;
          const said = { taskId, taskStatus: status, at: lastUpdatedAt, runId: b.runId };
          if (status === "completed") {
            const { _meta: _m, ...payload } = (state.result ?? {}) as Record<string, unknown>;
            const resultDigest = `sha256:${createHash("sha256").update(canonicalJson(payload)).digest("hex")}`;
            await report(
              payload.isError === true ? "failed" : "succeeded",
              { ...said, resultDigest },
              { providerOperationId: taskId, detail: { resultDigest } },
            );
          } else if (status === "failed") await report("failed", { ...said, error: state.error ?? state.task.statusMessage ?? null });
          else await report("aborted_unknown", { ...said, abortedBy: cancelled ? "quiesce" : "caller", reason: call.abortReason });
          return;
        }
        await sleep(Math.min(5000, Math.max(100, pollInterval ?? 1000)), undefined, stop.signal).catch(() => {});
      }
      // The gateway is ending with the task still running: a stop's provider check reads it from the upstream.
      log(`task ${taskId} still running as the gateway ends; left to the provider check`);
    } finally {
      inflight.remove(call.operationId);
    }
  };

  const servers = new Set<Server>();
  // Upstream tool-list changes reach every connected client.
  upstream.onToolListChanged(() => {
    for (const srv of servers) void srv.sendToolListChanged().catch(() => {});
  });

  const handleCall = async (req: { params: CallToolRequest["params"] }, c: CallContext): Promise<CallToolResult | CreateTaskResult> => {
    const tool = req.params.name;
    if (req.params.task && !upstream.tasks) throw new McpError(ErrorCode.InvalidParams, "the upstream server does not run tools as tasks");
    const operationId = `mcp-${instanceId}-${c.tag}${String(c.requestId)}`;
    const refuse = (reason: string, detail?: string, runId?: string) =>
      refusalResult({ tool, operationId, runId, decision: "deny", reason, detail });

    // 1. the gate, holding while paused
    let b: RunBinding;
    try {
      b = await ensureRun();
    } catch (err) {
      log(`cannot register with the control plane: ${describeError(err)}`);
      return refuse("control_plane_unavailable", describeError(err));
    }
    const seqAtGate = eventSeq;
    // While held, tell a client that asked for progress that the call is alive (clients time out long
    // calls that report nothing), and what it waits for.
    const progressToken = req.params._meta?.progressToken;
    const progress = (n: number, message: string) => {
      if (progressToken === undefined) return;
      void c.notify({ method: "notifications/progress", params: { progressToken, progress: n, message } }).catch(() => {});
    };
    const args = callArguments(req.params.arguments);
    let outcome;
    try {
      outcome = await askGate(
        () =>
          o.client.gate({ runId: b.runId, leaseId: b.leaseId, epoch: b.epoch, operationId, tool, ...(args ? { arguments: args } : {}) }),
        {
          signal: c.signal,
          wake: () => doorbell.signal,
          ...(o.approvalWaitMs !== undefined ? { maxApprovalWaitMs: o.approvalWaitMs } : {}),
          onApproval: (approvalId) => log(`${tool} (${operationId}) waits for a person to answer approval ${approvalId}`),
          onHold: (ans, attempt) =>
            progress(
              attempt + 1,
              ans.reason === "awaiting_approval"
                ? `Quiesce: waiting for a person to answer approval ${ans.approvalId ?? "?"}`
                : ans.reason === "paused"
                  ? "Quiesce: paused by operator; waiting to be resumed"
                  : `Quiesce: ${reasonText(ans.reason)}; waiting`,
            ),
        },
      );
    } catch (err) {
      return refuse("control_plane_unavailable", describeError(err), b.runId);
    }
    const held = outcome.answer;
    if (outcome.kind === "cancelled")
      return refuse("cancelled", `the caller cancelled while the call was held (${held ? reasonText(held.reason) : "held"})`, b.runId);
    if (outcome.kind === "held_too_long")
      return refusalResult({
        tool,
        operationId,
        runId: b.runId,
        decision: "deny",
        reason: outcome.answer.reason,
        approvalId: outcome.answer.approvalId,
        detail: `nobody answered within ${Math.round(outcome.heldMs / 1000)} s; a new call asks for a new approval`,
      });
    if (outcome.answer.decision !== "allow")
      return refusalResult({
        tool,
        operationId,
        runId: b.runId,
        decision: "deny",
        reason: outcome.answer.reason,
        approvalId: outcome.answer.approvalId,
        budget: outcome.answer.budget,
      });

    // 2. forward, abortable by the caller and by a kill
    const call = inflight.add(operationId, tool);
    // A control event between the gate's answer and now found no running call to check: check now.
    if (eventSeq !== seqAtGate) void inflight.check();
    const signal = AbortSignal.any([c.signal, call.ctrl.signal]);
    const report = async (
      outcome: "succeeded" | "failed" | "aborted_unknown",
      detail: Record<string, unknown>,
      effect?: { providerOperationId: string; detail: unknown },
    ) => {
      try {
        await o.client.complete(operationId, { outcome, detail: { harness: "mcp", tool, ...detail }, ...(effect ? { effect } : {}) });
      } catch (err) {
        // 409: the run is killed and the report was kept as barrier evidence — that is the point.
        if (!(err instanceof QuiesceApiError && err.status === 409))
          log(`could not report ${outcome} for ${operationId}: ${describeError(err)}`);
      }
    };
    let isTask = false;
    try {
      // The client's progress token is the client's: upstream gets the SDK's own, and its progress is
      // relayed back under the client's token.
      const { _meta: meta, ...params } = req.params;
      const { progressToken: _theirs, ...otherMeta } = meta ?? {};
      // The call's own signal, unhooked once answered: the SDK would otherwise send notifications/cancelled
      // for a request already answered (a task's), when a kill aborts the call afterwards.
      const callCtrl = new AbortController();
      const forward = () => callCtrl.abort(signal.reason);
      signal.addEventListener("abort", forward, { once: true });
      if (signal.aborted) forward();
      const answer = await upstream
        .callTool(
          { ...params, ...(Object.keys(otherMeta).length ? { _meta: otherMeta } : {}) },
          {
            signal: callCtrl.signal,
            timeout: o.callTimeoutMs ?? 3_600_000,
            ...(progressToken !== undefined
              ? {
                  onprogress: (p: { progress: number; total?: number; message?: string }) => {
                    void c.notify({ method: "notifications/progress", params: { ...p, progressToken } }).catch(() => {});
                  },
                }
              : {}),
          },
        )
        .finally(() => signal.removeEventListener("abort", forward));
      const created = (answer as Partial<CreateTaskResult>).task;
      if (created) {
        // The call's answer is a handle: the work goes on upstream, and so does the operation.
        isTask = true;
        void followTask(call, created.taskId, b, report);
        return answer as CreateTaskResult;
      }
      const result = answer as CallToolResult;
      call.answered = true;
      await report(result.isError ? "failed" : "succeeded", {});
      return adaptResult(result, c.version());
    } catch (err) {
      if (call.ctrl.signal.aborted) {
        await report("aborted_unknown", { abortedBy: "quiesce", reason: call.abortReason });
        return refusalResult({ tool, operationId, runId: b.runId, decision: "aborted", reason: call.abortReason ?? "killed" });
      }
      if (c.signal.aborted) {
        await report("aborted_unknown", { abortedBy: "caller" });
        throw err;
      }
      // A JSON-RPC error answered by the upstream means it did not do the work (failed); a broken link
      // or our own timeout means it may have (unknown).
      await report(outcomeUnknown(err) ? "aborted_unknown" : "failed", { error: describeError(err) });
      throw err;
    } finally {
      if (!isTask) inflight.remove(operationId);
    }
  };

  /** One downstream MCP server (one per client session); `transport` is wrapped to learn the protocol version. */
  // Request ids are per client session: an HTTP session's calls carry its number in their operationId.
  let sessions = 0;
  const buildServer = (http = false): { server: Server; version: () => string; watchInit: (t: Transport) => void } => {
    const tag = http ? `s${++sessions}-` : "";
    let version = negotiatedVersion(undefined);
    const server = new Server(
      { name: "quiesce-mcp-gateway", version: "0.1.0" },
      {
        capabilities: {
          tools: { listChanged: true },
          // Task-augmented tools/call reaches the client only when the upstream runs tasks.
          ...(upstream.tasks ? { tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } } : {}),
        },
        instructions: upstream.instructions,
      },
    );
    const watchInit = (t: Transport) => {
      const inner = t.onmessage;
      t.onmessage = (msg, extra) => {
        if (isInitializeRequest(msg)) {
          version = negotiatedVersion(msg.params.protocolVersion);
          log(`client session ${tag || "stdio"} negotiated MCP ${version} (asked ${String(msg.params.protocolVersion)})`);
        }
        inner?.(msg, extra);
      };
    };

    server.setRequestHandler(ListToolsRequestSchema, (req, extra) => upstream.listTools(req.params, extra.signal));
    if (upstream.tasks) {
      // Reading and cancelling a task changes nothing Quiesce guards: relayed as they are.
      server.setRequestHandler(GetTaskRequestSchema, async (req, extra) => (await upstream.getTask(req.params.taskId, extra.signal)).task);
      server.setRequestHandler(GetTaskPayloadRequestSchema, (req, extra) => upstream.taskResult(req.params.taskId, extra.signal));
      server.setRequestHandler(ListTasksRequestSchema, (req) => upstream.listTasks(req.params?.cursor));
      server.setRequestHandler(CancelTaskRequestSchema, async (req) => {
        await upstream.cancelTask(req.params.taskId);
        return (await upstream.getTask(req.params.taskId)).task;
      });
    }

    server.setRequestHandler(CallToolRequestSchema, (req, extra) =>
      handleCall(req, {
        requestId: extra.requestId,
        tag,
        signal: extra.signal,
        notify: (n) => extra.sendNotification(n),
        version: () => version,
      }),
    );

    servers.add(server);
    server.onclose = () => servers.delete(server);
    return { server, version: () => version, watchInit };
  };

  // ── lifetime: the gateway lives as long as both sides do ──
  let finish!: (code: number) => void;
  const done = new Promise<number>((resolve) => {
    finish = resolve;
    upstream.onclose = () => {
      log("upstream server exited");
      resolve(1);
    };
  });
  let httpServer: http.Server | null = null;
  if (o.listen) {
    let stateless = 0;
    const handle2026 = statelessHandler({
      upstream,
      instructions: upstream.instructions,
      log,
      call: (params, c) => handleCall({ params }, { ...c, tag: `r${++stateless}-`, version: () => MCP_2026 }),
    });
    httpServer = await serveHttp(o.listen, buildServer, log, handle2026);
    const { port } = httpServer.address() as AddressInfo;
    const url = `http://${o.listen.host}:${port}/mcp`;
    log(`serving MCP over Streamable HTTP at ${url}`);
    o.onListening?.(url);
    process.once("SIGTERM", () => finish(0));
    process.once("SIGINT", () => finish(0));
  } else {
    const { server, watchInit } = buildServer();
    const transport = o.transport ?? new StdioServerTransport();
    await server.connect(transport);
    watchInit(transport);
    const prev = server.onclose;
    server.onclose = () => {
      prev?.();
      finish(0);
    };
    // The stdio transport does not notice its client going away; end of stdin is that moment.
    if (!o.transport) process.stdin.once("end", () => void server.close());
  }
  ensureRun().catch((err) => log(`registration deferred: ${describeError(err)}`));
  const code = await done;
  stop.abort();
  clearInterval(tick);
  await Promise.allSettled([upstream.close(), ...[...servers].map((srv) => srv.close())]);
  if (httpServer)
    await new Promise<void>((r) => {
      httpServer!.closeAllConnections();
      httpServer!.close(() => r());
    });
  if (!o.transport && !o.listen) process.stdin.destroy(); // nothing more to read: let the process exit
  return code;
}

/** Streamable HTTP toward clients: POST/GET/DELETE /mcp, one transport + server per MCP session. */
async function serveHttp(
  listen: { host: string; port: number },
  buildServer: (http: boolean) => { server: Server; watchInit: (t: Transport) => void },
  log: (m: string) => void,
  stateless: (body: unknown, req: http.IncomingMessage, res: http.ServerResponse) => Promise<void>,
): Promise<http.Server> {
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const httpServer = http.createServer((req, res) => {
    void (async () => {
      if ((req.url ?? "").split("?")[0] !== "/mcp") {
        res.writeHead(404).end();
        return;
      }
      let body: unknown;
      if (req.method === "POST") {
        let raw = "";
        for await (const chunk of req) raw += chunk;
        try {
          body = JSON.parse(raw);
        } catch {
          res
            .writeHead(400, { "content-type": "application/json" })
            .end(JSON.stringify({ jsonrpc: "2.0", error: { code: -32700, message: "Parse error" }, id: null }));
          return;
        }
      }
      // A 2026-07-28 client: no session, every request stands alone.
      if (req.method === "POST" && isStateless(req, body)) return stateless(body, req, res);
      const sid = req.headers["mcp-session-id"];
      let transport = typeof sid === "string" ? sessions.get(sid) : undefined;
      if (!transport) {
        if (req.method !== "POST" || !isInitializeRequest(body)) {
          res
            .writeHead(400, { "content-type": "application/json" })
            .end(JSON.stringify({ jsonrpc: "2.0", error: { code: -32000, message: "Bad Request: no valid session" }, id: null }));
          return;
        }
        const t: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          onsessioninitialized: (id) => {
            sessions.set(id, t);
          },
        });
        t.onclose = () => {
          if (t.sessionId) sessions.delete(t.sessionId);
        };
        const { server, watchInit } = buildServer(true);
        await server.connect(t);
        watchInit(t);
        transport = t;
      }
      await transport.handleRequest(req, res, body);
    })().catch((err) => {
      log(`HTTP request failed: ${describeError(err)}`);
      if (!res.headersSent) res.writeHead(500).end();
    });
  });
  await new Promise<void>((resolve) => httpServer.listen(listen.port, listen.host, resolve));
  return httpServer;
}
