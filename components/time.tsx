"use client";
// Every time in the console: relative ("2m 10s ago", ticking) and absolute (absTime, in the reader's
// zone or UTC, their choice, kept in this browser), with the exact ISO instant in dateTime and title.
// The server renders the absolute UTC form only; the rest appears after hydration, from one shared
// one-second clock (the server's time when the browser's is off).
import { useSyncExternalStore } from "react";
import { absTime, relTime, type TimeZoneChoice } from "./format";

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

// The reader's choice of zone: this browser's (the default) or UTC, kept in localStorage so it holds
// across pages, reloads and tabs.
const ZONE_KEY = "quiesce.timeZone";
const zoneListeners = new Set<() => void>();
function readZone(): TimeZoneChoice {
  try {
    return localStorage.getItem(ZONE_KEY) === "utc" ? "utc" : "local";
  } catch {
    return "local";
  }
}
function subscribeZone(cb: () => void) {
  zoneListeners.add(cb);
  const onStorage = (e: StorageEvent) => {
    if (e.key === ZONE_KEY) cb();
  };
  window.addEventListener("storage", onStorage);
  return () => {
    zoneListeners.delete(cb);
    window.removeEventListener("storage", onStorage);
  };
}
export function setTimeZoneChoice(zone: TimeZoneChoice) {
  try {
    localStorage.setItem(ZONE_KEY, zone);
  } catch {
    // Storage refused (private mode): the choice holds for this page only.
  }
  zoneListeners.forEach((l) => l());
}
/** null on the server and during hydration, where times render in UTC like the server's HTML. */
export function useTimeZone(): TimeZoneChoice | null {
  return useSyncExternalStore(subscribeZone, readZone, () => null);
}

/** The header's switch between this browser's zone and UTC for every time on every page. */
export function TimeZoneToggle() {
  const zone = useTimeZone();
  return (
    <button
      type="button"
      className="btn btn-small btn-ghost"
      aria-pressed={zone === "utc"}
      disabled={zone === null}
      title="Show every time in UTC instead of this browser's time zone"
      onClick={() => setTimeZoneChoice(zone === "utc" ? "local" : "utc")}
    >
      Times in UTC
    </button>
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
  const zone = useTimeZone();
  if (!iso || Number.isNaN(Date.parse(iso))) return <span className="muted">{empty}</span>;
  const abs = absTime(iso, zone ?? "utc");
  const exact = new Date(iso).toISOString();
  if (mode === "absolute" || current === null)
    return (
      <time dateTime={exact} title={exact}>
        {abs}
      </time>
    );
  const rel = relTime(iso, current);
  if (mode === "relative")
    return (
      <time dateTime={exact} title={`${abs} (${exact})`}>
        {rel}
      </time>
    );
  return (
    <time dateTime={exact} title={exact} className="time-both">
      <span>{rel}</span> <span className="abs">{abs}</span>
    </time>
  );
}
