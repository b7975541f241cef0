"use client";
// A time shown both ways: relative ("2m 10s ago", ticking) and absolute UTC. The server renders the
// absolute form only; the relative form appears after hydration, from one shared one-second clock.
import { useSyncExternalStore } from "react";
import { absTime, relTime } from "./format";

let now = Date.now();
const listeners = new Set<() => void>();
let timer: ReturnType<typeof setInterval> | null = null;

function subscribe(cb: () => void) {
  listeners.add(cb);
  // The shared clock may be stale from an earlier page: start from the real time, not the last tick.
  if (!timer) now = Date.now();
  if (!timer)
    timer = setInterval(() => {
      now = Date.now();
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
