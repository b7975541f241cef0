// GET /api/v1/runs/{runId}/events — server-sent events for remote SDK clients (docs/architecture.md#integrations-fail-closed).
// Fed by this process's one LISTEN connection (lib/abort/listener.ts); every control change of the
// run's tree arrives as `event: control` with the notification as JSON. An event is a wake-up call,
// not an authority: clients re-check through the heartbeat before aborting anything.
//   event: ready    — sent once LISTEN is active: nothing committed after it can be missed
//   event: resync   — the server's listener reconnected: events may have been lost, re-check now
//   ": keep-alive"  — a comment every 15 s so proxies keep the stream open
// The stream ends when the client goes away, and after QUIESCE_SSE_MAX_SECONDS (default 600) so a
// revoked key stops receiving events: the client reconnects, is re-authenticated, and re-checks.
import { apiRoute } from "@/lib/api/route";
import { getRunView } from "@/lib/dal/runs";
import { controlListener } from "@/lib/abort/listener";
import type { WakeEvent } from "@/lib/abort/control-event";
import { setting } from "@/lib/config";

export const runtime = "nodejs";

const KEEPALIVE_MS = setting("QUIESCE_SSE_KEEPALIVE_MS");
const MAX_MS = setting("QUIESCE_SSE_MAX_SECONDS") * 1000;

export const GET = apiRoute({}, async ({ principal, params, req }) => {
  // Authorizes run.read and answers 404 for another team's run, exactly like GET /runs/{runId}.
  const run = await getRunView(principal, params.runId ?? "");
  const encoder = new TextEncoder();
  let controller: ReadableStreamDefaultController<Uint8Array> | null = null;
  const pending: string[] = [];
  let closed = false;
  const send = (text: string) => {
    if (closed) return;
    if (!controller) { pending.push(text); return; }
    try {
      controller.enqueue(encoder.encode(text));
    } catch {
      cleanup();
    }
  };
  const onWake = (e: WakeEvent) => {
    if (e.kind === "resync") send(`event: resync\ndata: ${JSON.stringify({ rootRunId: run.rootRunId })}\n\n`);
    else if (e.teamId === principal.teamId) send(`event: control\ndata: ${JSON.stringify(e)}\n\n`);
  };
  // Subscribe before answering: if the database is unreachable the client gets an error status,
  // not an open stream that would never deliver anything.
  const unsubscribe = await controlListener().subscribe(run.rootRunId, onWake);
  const timers: NodeJS.Timeout[] = [];
  function cleanup() {
    if (closed) return;
    closed = true;
    unsubscribe();
    for (const t of timers) clearTimeout(t);
    req.signal.removeEventListener("abort", cleanup);
    try { controller?.close(); } catch { /* already closed by the client */ }
  }
  req.signal.addEventListener("abort", cleanup, { once: true });
  if (req.signal.aborted) cleanup();

  const ready = { runId: run.runId, rootRunId: run.rootRunId, lifecycle: run.lifecycle, epoch: run.epoch };
  const stream = new ReadableStream<Uint8Array>({
    start(c) {
      if (closed) { c.close(); return; }
      controller = c;
      c.enqueue(encoder.encode(`retry: 1000\nevent: ready\ndata: ${JSON.stringify(ready)}\n\n`));
      for (const text of pending.splice(0)) send(text);
      timers.push(setInterval(() => send(": keep-alive\n\n"), KEEPALIVE_MS));
      timers.push(setTimeout(cleanup, MAX_MS));
    },
    cancel() {
      cleanup();
    },
  });
  return new Response(stream, {
    status: 200,
    headers: {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-cache, no-store, no-transform",
      connection: "keep-alive",
      "x-accel-buffering": "no",
    },
  });
});
