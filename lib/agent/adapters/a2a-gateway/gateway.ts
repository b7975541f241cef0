// `quiesce a2a-gateway --run <id> --upstream <url>`: an HTTP proxy in front of a remote A2A agent
// (docs/design/mcp-tasks.md). Every call that starts work — JSON-RPC SendMessage / SendStreamingMessage
// (v1.0), message/send / message/stream (v0.3), HTTP+JSON …/message:send|stream — asks the gate first,
// like a tool call (operationId "a2a-<gateway instance>-<n>"):
//   allow → forwarded; the task the agent answers with is recorded on the operation (with --provider,
//           so a stop's provider check asks the agent itself), and the operation runs until GetTask
//           says the task is terminal (completed → succeeded with the artifacts' digest; canceled →
//           aborted_unknown; failed / rejected → failed); a plain Message answer is succeeded at once
//   hold  → waits (re-asked with backoff, woken by control events) until allowed, denied or the caller leaves
//   deny, or no answer from the control plane → a JSON-RPC error (HTTP 403 for HTTP+JSON); nothing is forwarded
// A kill sends CancelTask (tasks/cancel, POST …/tasks/{id}:cancel) for every task it started and keeps
// reading the task until it is terminal: what it then reports is the holder's claim; the settlement is
// the provider's. A call whose task id is not known yet is aborted (its connection closed): unknown.
// Everything else (GetTask, the agent card with its URLs pointing here, …) is relayed as it is.
import { createHash, randomBytes } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { canonicalJson } from "../../../control/canonical";
import { Doorbell, sleep } from "../../../platform/wait";
import { askGate } from "../../sdk/hold";
import { callArguments } from "../../sdk/arguments";
import { subscribe } from "../../sdk/events";
import type { QuiesceClient } from "../../sdk/client";
import type { AdapterConfig } from "../common/config";
import { describeError, QuiesceApiError, reasonText } from "../common/control";
import { Inflight, type InflightCall } from "../mcp-gateway/inflight";
import {
  METHODS,
  restSend,
  SEND_METHODS,
  sentenceOf,
  taskOf,
  TASK_NOT_CANCELABLE,
  TERMINAL,
  type Dialect,
  type TaskView,
} from "./protocol";

export interface A2aGatewayOptions {
  cfg: AdapterConfig;
  client: QuiesceClient;
  parentRunId: string;
  parentLeaseId?: string;
  taskId?: string;
  /** The remote agent's JSON-RPC endpoint (HTTP+JSON paths are resolved against it too). */
  upstreamUrl: string;
  /** The providers row (kind a2a) through which a stop asks the agent about the tasks recorded here. */
  providerName?: string;
  listen: { host: string; port: number };
  onListening?: (url: string) => void;
  recheckMs?: number;
  log?: (m: string) => void;
  /** Ends the gateway (tests); SIGTERM / SIGINT otherwise. */
  signal?: AbortSignal;
}

interface RunBinding {
  runId: string;
  leaseId: string;
  epoch: number;
}

type Outcome = "succeeded" | "failed" | "aborted_unknown";

const REST_HEADERS = { accept: "application/json", "a2a-version": "1.0" };
const FORWARDED = ["content-type", "accept", "a2a-version", "a2a-extensions", "x-a2a-extensions", "authorization"];

export async function runA2aGateway(o: A2aGatewayOptions): Promise<number> {
  const log = o.log ?? ((m: string) => process.stderr.write(`quiesce a2a-gateway: ${m}\n`));
  const instanceId = randomBytes(6).toString("base64url");
  const stop = new AbortController();
  const doorbell = new Doorbell();
  const inflight = new Inflight(o.client, log);
  const upstream = new URL(o.upstreamUrl);
  let seq = 0;
  let eventSeq = 0;

  let binding: Promise<RunBinding> | null = null;
  const ensureRun = (): Promise<RunBinding> => {
    binding ??= (async () => {
      const r = await o.client.createRun({
        taskId: o.taskId ?? `a2a-gateway:${o.parentRunId}`,
        title: `A2A gateway → ${upstream.host}`,
        harness: "custom",
        parentRunId: o.parentRunId,
        ...(o.parentLeaseId ? { parentLeaseId: o.parentLeaseId } : {}),
        native: { sessionId: `a2a-gateway-${instanceId}` },
      });
      log(`registered run ${r.runId} under ${o.parentRunId}`);
      void subscribe(
        { url: o.cfg.url, apiKey: o.cfg.apiKey },
        r.runId,
        () => {
          eventSeq++;
          doorbell.ring();
          void inflight.check();
        },
        stop.signal,
        { onDisconnect: (e) => log(`event stream: ${e.message}; reconnecting`) },
      ).catch((err) => {
        if (!stop.signal.aborted) log(`event stream unavailable (${describeError(err)}); relying on periodic re-checks`);
      });
      return { runId: r.runId, leaseId: r.leaseId, epoch: r.epoch };
    })().catch((err) => {
      binding = null;
      throw err;
    });
    return binding;
  };
  const tick = setInterval(() => {
    if (inflight.size > 0) void inflight.check();
  }, o.recheckMs ?? 5000);

  /** One JSON-RPC call to the agent (v1 carries its version header). */
  const rpc = async (dialect: "v1" | "v0.3", method: string, params: Record<string, unknown>) => {
    const res = await fetch(upstream, {
      method: "POST",
      headers: { "content-type": "application/json", ...(dialect === "v1" ? { "a2a-version": "1.0" } : {}) },
      body: JSON.stringify({ jsonrpc: "2.0", id: `quiesce-${++seq}`, method, params }),
      signal: AbortSignal.timeout(15_000),
    });
    return (await res.json()) as { result?: unknown; error?: { code: number; message: string } };
  };
  const restBase = (pathname: string) => new URL(pathname.replace(/\/message:(send|stream)$/, ""), upstream).toString().replace(/\/$/, "");
  type RpcAnswer = { result?: unknown; error?: { code: number; message: string } };
  const getTask = async (d: Dialect, id: string, base: string): Promise<RpcAnswer> => {
    if (d === "rest") {
      const res = await fetch(`${base}/tasks/${encodeURIComponent(id)}`, { headers: REST_HEADERS, signal: AbortSignal.timeout(15_000) });
      return res.ok ? { result: await res.json() } : { error: { code: res.status, message: `HTTP ${res.status}` } };
    }
    return rpc(d, METHODS[d].get, { id });
  };
  const cancelTask = async (d: Dialect, id: string, base: string): Promise<RpcAnswer> => {
    if (d === "rest") {
      const res = await fetch(`${base}/tasks/${encodeURIComponent(id)}:cancel`, {
        method: "POST",
        headers: REST_HEADERS,
        signal: AbortSignal.timeout(15_000),
      });
      return res.ok ? { result: await res.json() } : { error: { code: res.status, message: `HTTP ${res.status}` } };
    }
    return rpc(d, METHODS[d].cancel, { id });
  };

  /** A task the agent runs for an allowed call: recorded, cancelled on a kill, read until terminal, reported. */
  const followTask = async (
    call: InflightCall,
    first: TaskView,
    d: Dialect,
    base: string,
    report: (o: Outcome, d: Record<string, unknown>, e?: { providerOperationId: string; detail: unknown }) => Promise<void>,
  ) => {
    const id = first.id;
    log(`${call.tool} (${call.operationId}) runs as task ${id} at the agent`);
    if (o.providerName)
      await o.client
        .recordProvider(call.operationId, { providerName: o.providerName, providerJobId: id })
        .catch((err) => log(`could not record task ${id} on ${call.operationId}: ${describeError(err)}`));
    let cancelAnswer: string | null = null;
    const onAbort = () => {
      log(`cancelling task ${id} at the agent: ${call.abortReason ?? "aborted"}`);
      cancelTask(d, id, base)
        .then((r) => {
          cancelAnswer = r.error ? (r.error.code === TASK_NOT_CANCELABLE ? "TaskNotCancelableError" : r.error.message) : "accepted";
          log(`cancel ${id}: ${cancelAnswer}`);
        })
        .catch((err) => log(`cancel ${id}: ${describeError(err)}`));
    };
    if (call.ctrl.signal.aborted) onAbort();
    else call.ctrl.signal.addEventListener("abort", onAbort, { once: true });
    try {
      let t: TaskView = first;
      let full: unknown = null;
      while (!TERMINAL.has(t.state)) {
        await sleep(1000, undefined, stop.signal);
        if (stop.signal.aborted) {
          log(`task ${id} still ${t.state} as the gateway ends; left to the provider check`);
          return;
        }
        try {
          const r = await getTask(d, id, base);
          const seen = r.result ? taskOf(r.result) : null;
          if (seen) {
            t = seen;
            full = r.result;
          }
        } catch (err) {
          log(`get ${id}: ${describeError(err)}`);
        }
      }
      call.answered = true;
      const said = { taskId: id, taskState: t.state, at: t.timestamp, said: sentenceOf(t), cancel: cancelAnswer };
      if (t.state === "completed") {
        const task = ((full as { task?: unknown } | null)?.task ?? full ?? {}) as Record<string, unknown>;
        const digest = `sha256:${createHash("sha256")
          .update(canonicalJson({ artifacts: task.artifacts ?? [], status: task.status ?? null }))
          .digest("hex")}`;
        await report("succeeded", { ...said, resultDigest: digest }, { providerOperationId: id, detail: { resultDigest: digest } });
      } else if (t.state === "canceled")
        await report("aborted_unknown", { ...said, abortedBy: call.ctrl.signal.aborted ? "quiesce" : "caller" });
      else await report("failed", said);
    } finally {
      inflight.remove(call.operationId);
    }
  };

  const reply = (res: http.ServerResponse, status: number, body: unknown) => {
    if (!res.headersSent) res.writeHead(status, { "content-type": "application/json" });
    res.end(JSON.stringify(body));
  };

  /** The send's parameters (JSON-RPC `params`, or the HTTP+JSON body); undefined when the body is not JSON. */
  const sentParams = (raw: string, d: Dialect): unknown => {
    try {
      const body = JSON.parse(raw) as { params?: unknown } | null;
      return d === "rest" ? body : (body?.params ?? undefined);
    } catch {
      return undefined;
    }
  };

  /** A call that starts work: gate, forward, follow its task. */
  const gated = async (
    req: http.IncomingMessage,
    res: http.ServerResponse,
    raw: string,
    rpcId: unknown,
    d: Dialect,
    tool: string,
    streaming: boolean,
    base: string,
  ) => {
    const operationId = `a2a-${instanceId}-${++seq}`;
    const gone = new AbortController();
    res.on("close", () => {
      if (!res.writableEnded) gone.abort();
    });
    const refuse = (reason: string, decision: "deny" | "aborted", detail?: string, runId?: string) => {
      const text =
        decision === "aborted"
          ? `Quiesce aborted ${tool}: ${reasonText(reason)}. Its outcome is UNKNOWN (recorded for reconciliation).`
          : `Quiesce denied ${tool}: ${reasonText(reason)}${detail ? ` (${detail})` : ""}.`;
      const data = { "dev.quiesce/gate": { decision, reason, operationId, runId: runId ?? null } };
      if (d === "rest") reply(res, 403, { error: { code: 403, message: text, details: [data] } });
      else reply(res, 200, { jsonrpc: "2.0", id: rpcId ?? null, error: { code: -32000, message: text, data } });
    };
    let b: RunBinding;
    try {
      b = await ensureRun();
    } catch (err) {
      return refuse("control_plane_unavailable", "deny", describeError(err));
    }
    const seqAtGate = eventSeq;
    // What is being sent is the call's arguments: an approval shows the message and binds to exactly it.
    const args = callArguments(sentParams(raw, d));
    let outcome;
    try {
      const ask = { runId: b.runId, leaseId: b.leaseId, epoch: b.epoch, operationId, tool, ...(args ? { arguments: args } : {}) };
      outcome = await askGate(() => o.client.gate(ask), {
        signal: gone.signal,
        wake: () => doorbell.signal,
      });
    } catch (err) {
      return refuse("control_plane_unavailable", "deny", describeError(err), b.runId);
    }
    if (outcome.kind === "cancelled") return refuse("cancelled", "deny", "the caller left while the run was paused", b.runId);
    if (outcome.answer.decision !== "allow") return refuse(outcome.answer.reason, "deny", undefined, b.runId);

    const call = inflight.add(operationId, tool);
    if (eventSeq !== seqAtGate) void inflight.check();
    const report = async (out: Outcome, detail: Record<string, unknown>, effect?: { providerOperationId: string; detail: unknown }) => {
      try {
        await o.client.complete(operationId, { outcome: out, detail: { harness: "a2a", tool, ...detail }, ...(effect ? { effect } : {}) });
      } catch (err) {
        if (!(err instanceof QuiesceApiError && err.status === 409))
          log(`could not report ${out} for ${operationId}: ${describeError(err)}`);
      }
    };
    let following = false;
    // Until the agent names a task, a kill can only close the connection (the request's own cancellation).
    const forward = new AbortController();
    const abortForward = () => forward.abort();
    call.ctrl.signal.addEventListener("abort", abortForward, { once: true });
    gone.signal.addEventListener("abort", abortForward, { once: true });
    const begin = (t: TaskView) => {
      call.ctrl.signal.removeEventListener("abort", abortForward);
      following = true;
      void followTask(call, t, d, base, report);
    };
    try {
      const headers: Record<string, string> = {};
      for (const h of FORWARDED) {
        const v = req.headers[h];
        if (typeof v === "string") headers[h] = v;
      }
      const target = d === "rest" ? new URL(req.url ?? "/", upstream) : upstream;
      const up = await fetch(target, { method: "POST", headers, body: raw, signal: forward.signal });
      const type = up.headers.get("content-type") ?? "";
      if (streaming && type.includes("text/event-stream")) {
        res.writeHead(up.status, { "content-type": type, "cache-control": "no-cache" });
        const reader = up.body!.pipeThrough(new TextDecoderStream()).getReader();
        let buf = "";
        let last: TaskView | null = null;
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          res.write(value);
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
            const msg = JSON.parse(data) as { result?: unknown };
            const t = taskOf(d === "rest" ? msg : msg.result);
            if (t) last = t;
            if (t && !following && !TERMINAL.has(t.state)) begin(t);
          }
        }
        res.end();
        if (!following) {
          call.answered = true;
          await report(
            last && TERMINAL.has(last.state) && last.state !== "completed" ? "failed" : "succeeded",
            last ? { said: sentenceOf(last) } : {},
          );
        }
        return;
      }
      const text = await up.text();
      res.writeHead(up.status, { "content-type": type || "application/json" }).end(text);
      let body: { result?: unknown; error?: unknown } = {};
      try {
        body = JSON.parse(text) as typeof body;
      } catch {
        /* not JSON: an error page */
      }
      const t = taskOf(d === "rest" ? body : body.result);
      if (t && !TERMINAL.has(t.state)) return begin(t);
      call.answered = true;
      if (!up.ok || body.error) return await report("failed", { error: body.error ?? `HTTP ${up.status}` });
      await report(
        t && t.state !== "completed" ? (t.state === "canceled" ? "aborted_unknown" : "failed") : "succeeded",
        t ? { said: sentenceOf(t) } : {},
      );
    } catch (err) {
      if (following) return; // the task is followed on its own
      if (call.ctrl.signal.aborted) {
        await report("aborted_unknown", { abortedBy: "quiesce", reason: call.abortReason });
        return refuse(call.abortReason ?? "killed", "aborted", undefined, b.runId);
      }
      await report("aborted_unknown", { abortedBy: gone.signal.aborted ? "caller" : "link", error: describeError(err) });
      if (!gone.signal.aborted)
        reply(res, 502, {
          jsonrpc: "2.0",
          id: rpcId ?? null,
          error: { code: -32603, message: `agent unreachable: ${describeError(err)}` },
        });
    } finally {
      if (!following) inflight.remove(operationId);
    }
  };

  let base = "";
  const relay = async (req: http.IncomingMessage, res: http.ServerResponse, raw: string | undefined) => {
    const headers: Record<string, string> = {};
    for (const h of FORWARDED) {
      const v = req.headers[h];
      if (typeof v === "string") headers[h] = v;
    }
    const up = await fetch(new URL(req.url ?? "/", upstream), {
      method: req.method,
      headers,
      body: raw,
      signal: AbortSignal.timeout(60_000),
    });
    let text = await up.text();
    // The agent card names where to call: here, not the agent behind us.
    if (/agent(-card)?\.json$/.test((req.url ?? "").split("?")[0]!)) text = text.split(upstream.origin).join(base);
    res.writeHead(up.status, { "content-type": up.headers.get("content-type") ?? "application/json" }).end(text);
  };

  const server = http.createServer((req, res) => {
    void (async () => {
      let raw = "";
      for await (const chunk of req) raw += chunk;
      const pathname = (req.url ?? "/").split("?")[0]!;
      if (req.method === "POST") {
        const rest = restSend(pathname);
        if (rest)
          return gated(
            req,
            res,
            raw,
            null,
            "rest",
            "a2a:message:" + (rest.streaming ? "stream" : "send"),
            rest.streaming,
            restBase(pathname),
          );
        let msg: { id?: unknown; method?: unknown } | null;
        try {
          msg = JSON.parse(raw) as { id?: unknown; method?: unknown } | null;
        } catch {
          msg = null; // relayed as it is
        }
        const send = typeof msg?.method === "string" ? SEND_METHODS[msg.method] : undefined;
        if (send) return gated(req, res, raw, msg!.id, send.dialect, `a2a:${String(msg!.method)}`, send.streaming, "");
      }
      return relay(req, res, req.method === "GET" || req.method === "HEAD" ? undefined : raw);
    })().catch((err) => {
      log(`request failed: ${describeError(err)}`);
      if (!res.headersSent) res.writeHead(502).end();
      else res.end();
    });
  });
  await new Promise<void>((r) => server.listen(o.listen.port, o.listen.host, r));
  const { port } = server.address() as AddressInfo;
  base = `http://${o.listen.host}:${port}`;
  log(`serving A2A at ${base}/ in front of ${o.upstreamUrl}`);
  o.onListening?.(`${base}/`);
  ensureRun().catch((err) => log(`registration deferred: ${describeError(err)}`));

  await new Promise<void>((resolve) => {
    if (o.signal) o.signal.addEventListener("abort", () => resolve(), { once: true });
    process.once("SIGTERM", () => resolve());
    process.once("SIGINT", () => resolve());
  });
  stop.abort();
  clearInterval(tick);
  await new Promise<void>((r) => {
    server.closeAllConnections();
    server.close(() => r());
  });
  return 0;
}
