"use client";
// A time shown both ways: relative ("2m 10s ago", ticking) and absolute UTC. The server renders the
// absolute form only; the relative form appears after hydration, from one shared one-second clock (the
// server's time when the browser's is off).
import { useSyncExternalStore } from "react";
import { absTime, relTime } from "./format";

// The server's clock minus this browser's, when they differ by more than a couple of seconds (a laptop
// whose clock is off would otherwise read a kill from a minute ago as "in 9m"). Learned from the Date
// header of the console's JSON answers (getJson in ./providers); one-second resolution, hence the margin.
let offset = 0;
const SKEW_MARGIN_MS = 2000;
export function syncServerClock(serverMs: number) {
  if (!Number.isFinite(serverMs)) return;
  const o = serverMs - Date.now();
  offset = Math.abs(o) > SKEW_MARGIN_MS ? o : 0;
}
const clock = () => Date.now() + offset;

let now = clock();
const listeners = new Set<() => void>();
let timer: ReturnType<typeof setInterval> | null = null;

function subscribe(cb: () => void) {
  listeners.add(cb);
  // The shared clock may be stale from an earlier page: start from the real time, not the last tick.
  if (!timer) now = clock();
  if (!timer)
    timer = setInterval(() => {
      now = clock();
      listeners.forEach((l) => l());
    }, 1000);
  return () => {
    listeners.delete(cb);
    if (listeners.size === 0 && timer) {
      clearInterval(timer);
      timer = null;
    }
  };
}

export function useNow(): number | null {
  return useSyncExternalStore(
    subscribe,
    () => now,
    () => null,
  );
}

export function Time({
  iso,
  mode = "both",
  empty = "—",
}: {
  iso: string | null | undefined;
  mode?: "both" | "relative" | "absolute";
  empty?: string;
}) {
  const current = useNow();
  if (!iso) return <span className="muted">{empty}</span>;
  const abs = absTime(iso);
  if (mode === "absolute" || current === null)
    return (
      <time dateTime={iso} title={abs}>
        {abs}
      </time>
    );
  const rel = relTime(iso, current);
  if (mode === "relative")
    return (
      <time dateTime={iso} title={abs}>
        {rel}
      </time>
    );
  return (
    <time dateTime={iso} title={abs} className="time-both">
      <span>{rel}</span> <span className="abs">{abs}</span>
    </time>
  );
}
