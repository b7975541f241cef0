// The one server-sent-events helper, used by both live streams (the machine API's run events and the
// console's live updates). A stream is only as good as the authority behind it: the caller's authority
// is re-checked at least every QUIESCE_SSE_RECHECK_MS (default 5 s) and the stream is closed — after an
// `event: revoked` — as soon as it is gone (key revoked or expired, member removed, user disabled,
// session ended). Keep-alive comments hold proxies open; an optional maximum age ends every stream
// (announced first when the route asks, so a planned rotation is not mistaken for a failure).
import "server-only";
import { setting } from "../platform/config";

export interface SseOptions {
  /** The request: a client disconnect ends the stream. */
  req: Request;
  /** Resolves true while the caller may still receive this stream. Errors count as "gone". */
  recheck: () => Promise<boolean>;
  /** Subscribes to the source; `send` writes raw SSE text. Returns the unsubscribe function. */
  subscribe: (send: (text: string) => void) => Promise<() => void>;
  /** Written first (e.g. `retry:` and a `ready` event). */
  first?: string;
  keepAliveMs?: number;
  recheckMs?: number;
  /** Ends the stream after this long (the client reconnects and is authenticated afresh). */
  maxMs?: number;
  /**
   * Written just before that planned end (e.g. `retry: 250` and an `event: rotate`), so the client can
   * tell a rotation from a failure and come back at once.
   */
  beforeMaxClose?: string;
}

const encoder = new TextEncoder();

export const SSE_HEADERS = {
  "content-type": "text/event-stream; charset=utf-8",
  "cache-control": "no-cache, no-store, no-transform",
  connection: "keep-alive",
  "x-accel-buffering": "no",
} as const;

/** Subscribes (so an unreachable source is an error status, not a silent stream) and returns the response. */
export async function sseResponse(o: SseOptions): Promise<Response> {
  let controller: ReadableStreamDefaultController<Uint8Array> | null = null;
  const pending: string[] = [];
  let closed = false;
  const timers: NodeJS.Timeout[] = [];
  let unsubscribe: () => void = () => {};

  const send = (text: string) => {
    if (closed) return;
    if (!controller) {
      pending.push(text);
      return;
    }
    try {
      controller.enqueue(encoder.encode(text));
    } catch {
      close();
    }
  };
  function close() {
    if (closed) return;
    closed = true;
    for (const t of timers) clearTimeout(t);
    unsubscribe();
    o.req.signal.removeEventListener("abort", close);
    try {
      controller?.close();
    } catch {
      /* already closed by the client */
    }
  }

  unsubscribe = await o.subscribe(send);
  o.req.signal.addEventListener("abort", close, { once: true });
  if (o.req.signal.aborted) close();

  const recheckMs = o.recheckMs ?? setting("QUIESCE_SSE_RECHECK_MS");
  let checking = false;
  const recheck = async () => {
    if (closed || checking) return;
    checking = true;
    const ok = await o.recheck().catch(() => false);
    checking = false;
    if (!ok && !closed) {
      send(`event: revoked\ndata: {"reason":"authority gone"}\n\n`);
      close();
    }
  };

  const stream = new ReadableStream<Uint8Array>({
    start(c) {
      if (closed) {
        c.close();
        return;
      }
      controller = c;
      if (o.first) c.enqueue(encoder.encode(o.first));
      for (const text of pending.splice(0)) send(text);
      timers.push(setInterval(() => send(": keep-alive\n\n"), o.keepAliveMs ?? 15_000));
      timers.push(
        setInterval(() => {
          void recheck();
        }, recheckMs),
      );
      if (o.maxMs)
        timers.push(
          setTimeout(() => {
            if (o.beforeMaxClose) send(o.beforeMaxClose);
            close();
          }, o.maxMs),
        );
    },
    cancel() {
      close();
    },
  });
  return new Response(stream, { status: 200, headers: SSE_HEADERS });
}
