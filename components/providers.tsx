"use client";
// react-query for every live view, plus one EventSource on /api/console/events: a control change in
// the member's team (pause, kill, settlement, receipt…) invalidates the views at once; a slow poll
// covers what is not announced (heartbeats, gate decisions) and any missed event.
import { QueryClient, QueryClientProvider, useQueryClient } from "@tanstack/react-query";
import { useEffect, useState, useSyncExternalStore, type ReactNode } from "react";
import { syncServerClock } from "./time";

export type LiveStatus = "connecting" | "live" | "reconnecting";

// The badge's state lives in a small store read by the badge alone, not in a context above the page.
// A context value that changes while the page's streamed Suspense boundary is still dehydrated (the
// stream opens within a few hundred ms, often before a slow page has arrived) can make React stop
// hydrating that boundary and render it on the client (updateDehydratedSuspenseComponent), which
// would leave the server's streamed copy behind. A precaution: it was not reproduced here
// (e2e/console/clean-console.spec.ts races exactly this and passes with either).
//
// Two signals feed it: the event stream, and the JSON polls (getJson). Either failing for longer than
// the grace period reads "Reconnecting…": a stream can stay open while the API behind it fails.
let streamEverOpen = false;
let streamFailing = false;
let apiFailing = false;
let liveStatus: LiveStatus = "connecting";
const liveListeners = new Set<() => void>();
function publishLive() {
  const next: LiveStatus = streamFailing || apiFailing ? "reconnecting" : streamEverOpen ? "live" : "connecting";
  if (next === liveStatus) return;
  liveStatus = next;
  for (const l of liveListeners) l();
}
function subscribeLive(cb: () => void) {
  liveListeners.add(cb);
  return () => {
    liveListeners.delete(cb);
  };
}
export function useLiveStatus(): LiveStatus {
  return useSyncExternalStore(
    subscribeLive,
    () => liveStatus,
    () => "connecting",
  );
}
const noSubscription = () => () => {};
/**
 * False on the server and while React hydrates the server's HTML, true from the first render after.
 * For what only the browser knows, above all whether a query is fetching right now: React can throw a
 * hydration attempt away (the live stream opening mid-hydration interrupts it) and hydrate again later,
 * and the query the first attempt put into the cache is by then stale or invalidated, so `isFetching`
 * is true at hydration where the server rendered it false (docs/design/render-after-hydration.md).
 */
export function useHydrated(): boolean {
  return useSyncExternalStore(
    noSubscription,
    () => true,
    () => false,
  );
}

export const POLL_MS = 5000;

/**
 * A failure must last this long before the badge says "Reconnecting…": the server rotates the stream
 * every minute (announced with `event: rotate`) and the browser is back well within it, so a planned
 * rotation, or a blip, never shows.
 */
export const RECONNECTING_AFTER_MS = 2500;

// The JSON API's health, from every getJson. While it fails, at most one request per poll interval
// goes out (the others fail at once without touching the network): each failed request is a console
// error the browser prints, and a dozen views retrying on their own would print a dozen per cycle.
let apiDownSince: number | null = null;
let apiGrace: ReturnType<typeof setTimeout> | null = null;
let nextAttemptAt = 0;
const recoveryListeners = new Set<() => void>();
function apiFailed() {
  if (apiDownSince !== null) return;
  apiDownSince = Date.now();
  nextAttemptAt = apiDownSince + ATTEMPT_EVERY_MS;
  apiGrace = setTimeout(() => {
    apiFailing = true;
    publishLive();
  }, RECONNECTING_AFTER_MS);
}
function apiAnswered() {
  if (apiDownSince === null) return;
  apiDownSince = null;
  if (apiGrace) clearTimeout(apiGrace);
  apiGrace = null;
  apiFailing = false;
  publishLive();
  for (const l of recoveryListeners) l();
}
// A little under the poll interval, so timer jitter cannot make every other poll miss its turn.
const ATTEMPT_EVERY_MS = POLL_MS - 500;
/** May a request go out now? Always while the API answers; once per poll interval while it fails. */
function mayAttempt(): boolean {
  if (apiDownSince === null) return true;
  if (Date.now() < nextAttemptAt) return false;
  nextAttemptAt = Date.now() + ATTEMPT_EVERY_MS;
  return true;
}

function LiveEvents({ children }: { children: ReactNode }) {
  const client = useQueryClient();
  useEffect(() => {
    let source: EventSource | null = null;
    let stopped = false;
    let rotating = false;
    let down: ReturnType<typeof setTimeout> | null = null;
    let retry: ReturnType<typeof setTimeout> | null = null;
    let attempts = 0;
    const onControl = () => {
      void client.invalidateQueries();
    };
    const onRotate = () => {
      rotating = true;
    };
    const open = () => {
      retry = null;
      if (stopped) return;
      // While the API is down the stream shares the polls' one attempt per interval.
      if (!mayAttempt()) {
        retry = setTimeout(open, POLL_MS);
        return;
      }
      const s = new EventSource("/api/console/events");
      source = s;
      s.onopen = () => {
        attempts = 0;
        if (down) clearTimeout(down);
        down = null;
        streamEverOpen = true;
        streamFailing = false;
        publishLive();
      };
      s.onerror = () => {
        // A planned rotation: the browser is back within the server's `retry: 250`.
        if (rotating && s.readyState === EventSource.CONNECTING) {
          rotating = false;
          return;
        }
        rotating = false;
        // Only a failure that outlasts the grace period is shown.
        if (!down)
          down = setTimeout(() => {
            streamFailing = true;
            publishLive();
          }, RECONNECTING_AFTER_MS);
        // Our schedule, not the browser's (a quarter of a second after a rotation, for good after an
        // HTTP error): back off from one poll interval up to 30 s, sooner when the API answers again.
        s.close();
        if (retry || stopped) return;
        attempts += 1;
        retry = setTimeout(open, Math.min(30_000, POLL_MS * 2 ** Math.min(attempts - 1, 3)));
      };
      s.addEventListener("control", onControl);
      s.addEventListener("rotate", onRotate);
    };
    // The API answers again: refetch what failed meanwhile, and reopen the stream now if it is closed.
    const onRecovered = () => {
      void client.invalidateQueries();
      if (source?.readyState === EventSource.CLOSED && retry) {
        clearTimeout(retry);
        open();
      }
    };
    recoveryListeners.add(onRecovered);
    open();
    return () => {
      stopped = true;
      recoveryListeners.delete(onRecovered);
      if (down) clearTimeout(down);
      if (retry) clearTimeout(retry);
      source?.removeEventListener("control", onControl);
      source?.removeEventListener("rotate", onRotate);
      source?.close();
      streamEverOpen = false;
      streamFailing = false;
      publishLive();
    };
  }, [client]);
  return <>{children}</>;
}

export function Providers({ children }: { children: ReactNode }) {
  const [client] = useState(
    () =>
      new QueryClient({
        defaultOptions: {
          queries: { refetchInterval: POLL_MS, refetchOnWindowFocus: true, staleTime: 1000, retry: 2 },
        },
      }),
  );
  return (
    <QueryClientProvider client={client}>
      <LiveEvents>{children}</LiveEvents>
    </QueryClientProvider>
  );
}

export class FetchError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

const UNREACHABLE = "the console cannot reach the server; trying again every few seconds";

/**
 * GET a console endpoint; a 4xx/5xx becomes a FetchError carrying the server's code and message. A
 * network failure or a 5xx marks the API down (the badge, one attempt per interval); any answer below
 * 500 marks it up.
 */
export async function getJson<T>(url: string): Promise<T> {
  if (!mayAttempt()) throw new FetchError(0, "unreachable", UNREACHABLE);
  let res: Response;
  try {
    res = await fetch(url, { headers: { accept: "application/json" }, cache: "no-store" });
  } catch {
    apiFailed();
    throw new FetchError(0, "unreachable", UNREACHABLE);
  }
  if (res.status >= 502 && res.status <= 504) apiFailed();
  else apiAnswered();
  const date = res.headers.get("date");
  if (date) syncServerClock(Date.parse(date));
  if (!res.ok) {
    const body = (await res.json().catch(() => null)) as { error?: { code?: string; message?: string } } | null;
    throw new FetchError(res.status, body?.error?.code ?? "error", body?.error?.message ?? `request failed (${res.status})`);
  }
  return res.json() as Promise<T>;
}
