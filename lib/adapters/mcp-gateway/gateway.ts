// `quiesce mcp-gateway --run <id> -- <server command…>`: a stdio MCP server (the SDK's Server) in front
// of an upstream stdio MCP server (the SDK's Client). tools/list is proxied; every tools/call asks the
// gate first (operationId "mcp-<gateway instance>-<JSON-RPC request id>"):
//   allow → forwarded; the outcome is reported (succeeded / failed, or aborted_unknown)
//   hold  → waits and asks again (capped backoff, woken by control events), until allowed, denied,
//           or the caller cancels
//   deny, or no answer from the control plane → an isError tool result; nothing reaches upstream
// A kill while calls run aborts them (the SDK sends notifications/cancelled upstream) and records
// each as aborted_unknown unless the upstream's answer had already arrived.
import { randomBytes } from "node:crypto";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { subscribe } from "../../sdk/events";
import type { QuiesceClient } from "../../sdk/client";
import type { AdapterConfig } from "../common/config";
import { describeError, QuiesceApiError } from "../common/control";
import { Doorbell } from "../common/wait";
import { askGate } from "../../sdk/hold";
import { Inflight } from "./inflight";
import { refusalResult } from "./results";

export interface GatewayOptions {
  cfg: AdapterConfig;
  client: QuiesceClient;
  parentRunId: string;
  parentLeaseId?: string;
  taskId?: string;
  command: string;
  args: string[];
  /** Upstream call timeout (the caller's own cancellation still applies). */
  callTimeoutMs?: number;
  /** Safety-net re-check of running calls while the event stream may be down. */
  recheckMs?: number;
  /** Downstream transport; default stdio. */
  transport?: Transport;
  log?: (m: string) => void;
}

interface RunBinding { runId: string; leaseId: string; epoch: number }

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

  const upstream = new Client({ name: "quiesce-mcp-gateway", version: "0.1.0" }, { capabilities: {} });
  const upstreamTransport = new StdioClientTransport({ command: o.command, args: o.args, env: upstreamEnv(), stderr: "inherit" });
  await upstream.connect(upstreamTransport);
  const upstreamInfo = upstream.getServerVersion();

  // ── the gateway's own child run, registered under --run ──
  let binding: Promise<RunBinding> | null = null;
  const ensureRun = (): Promise<RunBinding> => {
    binding ??= (async () => {
      const r = await o.client.createRun({
        taskId: o.taskId ?? `mcp-gateway:${o.parentRunId}`,
        title: `MCP gateway → ${upstreamInfo?.name ?? path.basename(o.command)}`,
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
      await subscribe({ url: o.cfg.url, apiKey: o.cfg.apiKey }, runId, () => {
        eventSeq++;
        doorbell.ring();
        void inflight.check();
      }, stop.signal, { onDisconnect: (e) => log(`event stream: ${e.message}; reconnecting`) });
    } catch (err) {
      if (!stop.signal.aborted) log(`event stream unavailable (${describeError(err)}); relying on periodic re-checks`);
    }
  };
  let eventSeq = 0;
  const tick = setInterval(() => {
    if (inflight.size > 0) void inflight.check();
  }, o.recheckMs ?? 5000);

  const server = new Server(
    { name: "quiesce-mcp-gateway", version: "0.1.0" },
    { capabilities: { tools: {} }, instructions: upstream.getInstructions() },
  );

  server.setRequestHandler(ListToolsRequestSchema, (req, extra) => upstream.listTools(req.params, { signal: extra.signal }));

  server.setRequestHandler(CallToolRequestSchema, async (req, extra): Promise<CallToolResult> => {
    const tool = req.params.name;
    const operationId = `mcp-${instanceId}-${String(extra.requestId)}`;
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
    // While held by a pause, tell a client that asked for progress that the call is alive (clients
    // time out long calls that report nothing).
    const progressToken = req.params._meta?.progressToken;
    let outcome;
    try {
      outcome = await askGate(() => o.client.gate({ runId: b.runId, leaseId: b.leaseId, epoch: b.epoch, operationId, tool }), {
        signal: extra.signal,
        wake: () => doorbell.signal,
        onHold: (_ans, attempt) => {
          if (progressToken === undefined) return;
          void extra.sendNotification({
            method: "notifications/progress",
            params: { progressToken, progress: attempt + 1, message: "Quiesce: paused by operator; waiting to be resumed" },
          }).catch(() => {});
        },
      });
    } catch (err) {
      return refuse("control_plane_unavailable", describeError(err), b.runId);
    }
    if (outcome.kind === "cancelled") return refuse("cancelled", "the caller cancelled while the run was paused", b.runId);
    if (outcome.answer.decision !== "allow") return refuse(outcome.answer.reason, undefined, b.runId);

    // 2. forward, abortable by the caller and by a kill
    const call = inflight.add(operationId, tool);
    // A control event between the gate's answer and now found no running call to check: check now.
    if (eventSeq !== seqAtGate) void inflight.check();
    const signal = AbortSignal.any([extra.signal, call.ctrl.signal]);
    const report = async (outcome: "succeeded" | "failed" | "aborted_unknown", detail: Record<string, unknown>) => {
      try {
        await o.client.complete(operationId, { outcome, detail: { harness: "mcp", tool, ...detail } });
      } catch (err) {
        // 409: the run is killed and the report was kept as barrier evidence — that is the point.
        if (!(err instanceof QuiesceApiError && err.status === 409)) log(`could not report ${outcome} for ${operationId}: ${describeError(err)}`);
      }
    };
    try {
      const result = await upstream.callTool(req.params, undefined, {
        signal, timeout: o.callTimeoutMs ?? 3_600_000,
      }) as CallToolResult;
      call.answered = true;
      await report(result.isError ? "failed" : "succeeded", {});
      return result;
    } catch (err) {
      if (call.ctrl.signal.aborted) {
        await report("aborted_unknown", { abortedBy: "quiesce", reason: call.abortReason });
        return refusalResult({ tool, operationId, runId: b.runId, decision: "aborted", reason: call.abortReason ?? "killed" });
      }
      if (extra.signal.aborted) {
        await report("aborted_unknown", { abortedBy: "caller" });
        throw err;
      }
      // A JSON-RPC error answered by the upstream means it did not do the work (failed); a broken link
      // or our own timeout means it may have (unknown).
      await report(outcomeUnknown(err) ? "aborted_unknown" : "failed", { error: describeError(err) });
      throw err;
    } finally {
      inflight.remove(operationId);
    }
  });

  // ── lifetime: the gateway lives as long as both sides do ──
  const done = new Promise<number>((resolve) => {
    upstream.onclose = () => {
      log("upstream server exited");
      resolve(1);
    };
    server.onclose = () => resolve(0);
  });
  await server.connect(o.transport ?? new StdioServerTransport());
  // The stdio transport does not notice its client going away; end of stdin is that moment.
  if (!o.transport) process.stdin.once("end", () => void server.close());
  ensureRun().catch((err) => log(`registration deferred: ${describeError(err)}`));
  const code = await done;
  stop.abort();
  clearInterval(tick);
  await Promise.allSettled([upstream.close(), server.close()]);
  if (!o.transport) process.stdin.destroy(); // nothing more to read: let the process exit
  return code;
}
