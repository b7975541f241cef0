"use client";
// react-query for every live view, plus one EventSource on /api/console/events: a control change in
// the member's team (pause, kill, settlement, receipt…) invalidates the views at once; a slow poll
// covers what is not announced (heartbeats, gate decisions) and any missed event.
import { QueryClient, QueryClientProvider, useQueryClient } from "@tanstack/react-query";
import { createContext, useContext, useEffect, useState, type ReactNode } from "react";

export type LiveStatus = "connecting" | "live" | "reconnecting";
const LiveContext = createContext<LiveStatus>("connecting");
export const useLiveStatus = () => useContext(LiveContext);

export const POLL_MS = 5000;

function LiveEvents({ children }: { children: ReactNode }) {
  const client = useQueryClient();
  const [status, setStatus] = useState<LiveStatus>("connecting");
  useEffect(() => {
    const source = new EventSource("/api/console/events");
    source.onopen = () => setStatus("live");
    source.onerror = () => setStatus("reconnecting");
    const onControl = () => {
      void client.invalidateQueries();
    };
    source.addEventListener("control", onControl);
    return () => {
      source.removeEventListener("control", onControl);
      source.close();
    };
  }, [client]);
  return <LiveContext.Provider value={status}>{children}</LiveContext.Provider>;
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
  if (!res.ok) {
    const body = (await res.json().catch(() => null)) as { error?: { code?: string; message?: string } } | null;
    throw new FetchError(res.status, body?.error?.code ?? "error", body?.error?.message ?? `request failed (${res.status})`);
  }
  return res.json() as Promise<T>;
}
