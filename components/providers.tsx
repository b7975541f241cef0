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
let liveStatus: LiveStatus = "connecting";
const liveListeners = new Set<() => void>();
function setLiveStatus(next: LiveStatus) {
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

function LiveEvents({ children }: { children: ReactNode }) {
  const client = useQueryClient();
  useEffect(() => {
    let source: EventSource | null = null;
    let stopped = false;
    let down: ReturnType<typeof setTimeout> | null = null;
    let retry: ReturnType<typeof setTimeout> | null = null;
    let attempts = 0;
    const onControl = () => {
      void client.invalidateQueries();
    };
    const open = () => {
      const s = new EventSource("/api/console/events");
      source = s;
      s.onopen = () => {
        attempts = 0;
        if (down) clearTimeout(down);
        down = null;
        setLiveStatus("live");
      };
      s.onerror = () => {
        // Only a failure that outlasts the grace period is shown.
        if (!down) down = setTimeout(() => setLiveStatus("reconnecting"), RECONNECTING_AFTER_MS);
        // The browser gives up for good on an HTTP error (a 401 after the session ended, a 5xx during a
        // restart): try again ourselves, backing off up to 30 s.
        if (s.readyState === EventSource.CLOSED && !stopped) {
          s.close();
          attempts += 1;
          retry = setTimeout(open, Math.min(30_000, 1000 * 2 ** Math.min(attempts - 1, 5)));
        }
      };
      s.addEventListener("control", onControl);
    };
    open();
    return () => {
      stopped = true;
      if (down) clearTimeout(down);
      if (retry) clearTimeout(retry);
      source?.removeEventListener("control", onControl);
      source?.close();
      setLiveStatus("connecting");
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

/** GET a console endpoint; a 4xx/5xx becomes a FetchError carrying the server's code and message. */
export async function getJson<T>(url: string): Promise<T> {
  const res = await fetch(url, { headers: { accept: "application/json" }, cache: "no-store" });
  const date = res.headers.get("date");
  if (date) syncServerClock(Date.parse(date));
  if (!res.ok) {
    const body = (await res.json().catch(() => null)) as { error?: { code?: string; message?: string } } | null;
    throw new FetchError(res.status, body?.error?.code ?? "error", body?.error?.message ?? `request failed (${res.status})`);
  }
  return res.json() as Promise<T>;
}
