// Remote control events: GET /api/v1/runs/{runId}/events as server-sent events, parsed with
// eventsource-parser. `subscribe` resolves once the server confirms it is listening (`ready`), so
// nothing committed afterwards can be missed; it then keeps the stream open, reconnecting with
// backoff until `signal` aborts. After every reconnect it emits `resync` (events may have been lost
// while disconnected) so the caller re-checks authority. Events are wake-up calls, not authority.
import { createParser } from "eventsource-parser";
import { ControlEventSchema, type ControlEvent } from "../../schemas/control-event";
import { QuiesceApiError, QuiesceUnreachableError, newRequestId } from "./errors";
import { backoffDelay, sleep } from "../../platform/wait";

export interface EventsConnection {
  url: string;
  apiKey: string;
  fetch?: typeof fetch;
  /** How long to wait for the stream's headers (default 5000 ms). */
  timeoutMs?: number;
}

export interface ReadyInfo {
  runId: string;
  rootRunId: string;
  lifecycle?: string;
  epoch?: number;
}

export type RunEvent = { type: "ready"; data: ReadyInfo } | { type: "control"; data: ControlEvent } | { type: "resync" };

export interface SubscribeOptions {
  /** Called on every disconnect / failed reconnect (for logs). */
  onDisconnect?: (err: Error) => void;
}

export async function subscribe(
  conn: EventsConnection,
  runId: string,
  onEvent: (e: RunEvent) => void,
  signal: AbortSignal,
  opts: SubscribeOptions = {},
): Promise<void> {
  let first = true;
  let resolveReady!: () => void;
  let rejectReady!: (err: unknown) => void;
  const ready = new Promise<void>((res, rej) => {
    resolveReady = res;
    rejectReady = rej;
  });

  const loop = async () => {
    let attempt = 0;
    while (!signal.aborted) {
      try {
        await streamOnce(conn, runId, signal, (e) => {
          if (e.type === "ready") {
            attempt = 0;
            if (first) {
              first = false;
              resolveReady();
            } else onEvent({ type: "resync" });
          }
          onEvent(e);
        });
        if (signal.aborted) return;
        opts.onDisconnect?.(new Error("event stream ended"));
      } catch (err) {
        if (signal.aborted) return;
        // The first connection's failure belongs to the caller (fail closed: do not start work
        // that nobody could stop); later ones are retried.
        if (first) {
          rejectReady(err);
          return;
        }
        opts.onDisconnect?.(err as Error);
      }
      await sleep(backoffDelay(attempt++, { baseMs: 250, capMs: 5000 }), undefined, signal);
    }
  };
  void loop();
  signal.addEventListener(
    "abort",
    () => {
      if (first) rejectReady(signal.reason ?? new Error("aborted"));
    },
    { once: true },
  );
  return ready;
}

async function streamOnce(conn: EventsConnection, runId: string, signal: AbortSignal, emit: (e: RunEvent) => void): Promise<void> {
  const f = conn.fetch ?? fetch;
  const ctrl = new AbortController();
  const onAbort = () => ctrl.abort(signal.reason);
  signal.addEventListener("abort", onAbort, { once: true });
  const headerTimer = setTimeout(() => ctrl.abort(new Error("timed out waiting for the event stream")), conn.timeoutMs ?? 5000);
  const requestId = newRequestId(); // one per connection (each reconnect is a new request)
  try {
    let res: Response;
    try {
      res = await f(`${conn.url.replace(/\/+$/, "")}/api/v1/runs/${encodeURIComponent(runId)}/events`, {
        headers: { authorization: `Bearer ${conn.apiKey}`, accept: "text/event-stream", "x-request-id": requestId },
        signal: ctrl.signal,
      });
    } catch (err) {
      throw new QuiesceUnreachableError(`event stream: ${(err as Error).message}`, { cause: err, requestId });
    }
    if (!res.ok || !res.body) {
      const body = (await res.json().catch(() => null)) as { error?: { code?: string; message?: string } } | null;
      throw new QuiesceApiError(
        res.status,
        body?.error?.code ?? "http_error",
        body?.error?.message ?? `event stream answered ${res.status}`,
        undefined,
        requestId,
      );
    }
    clearTimeout(headerTimer);
    const parser = createParser({
      onEvent(msg) {
        try {
          if (msg.event === "ready") emit({ type: "ready", data: JSON.parse(msg.data) as ReadyInfo });
          else if (msg.event === "resync") emit({ type: "resync" });
          else if (msg.event === "control") {
            const parsed = ControlEventSchema.safeParse(JSON.parse(msg.data));
            if (parsed.success) emit({ type: "control", data: parsed.data });
          }
        } catch {
          // A malformed frame is ignored; the next event (or the heartbeat) still re-checks.
        }
      },
    });
    const decoder = new TextDecoder();
    const reader = res.body.getReader();
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        parser.feed(decoder.decode(value, { stream: true }));
      }
    } catch (err) {
      if (!signal.aborted) throw new QuiesceUnreachableError(`event stream lost: ${(err as Error).message}`);
    } finally {
      reader.releaseLock?.();
    }
  } finally {
    clearTimeout(headerTimer);
    signal.removeEventListener("abort", onAbort);
  }
}
