// Formatting shared by server and client components. One absolute form everywhere, "2026-12-03
// 18:27:03 EST": ISO order in every locale, so people on a call and the exports read the same digits.
// The server renders UTC (it cannot know the reader's zone); the browser switches to the reader's
// choice after hydration (useTimeZone in ./time), so both renders agree.

export type TimeZoneChoice = "utc" | "local";

// en-US only for the zone's short name ("EST", else "GMT+1"): the digits are assembled in ISO order.
let localFormat: Intl.DateTimeFormat | null = null;
const local = () =>
  (localFormat ??= new Intl.DateTimeFormat("en-US", {
    year: "numeric",
    month: "2-digit",
    day: "2-digit",
    hour: "2-digit",
    minute: "2-digit",
    second: "2-digit",
    hourCycle: "h23",
    timeZoneName: "short",
  }));

export function absTime(iso: string | null | undefined, zone: TimeZoneChoice = "utc"): string {
  if (!iso) return "—";
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return "—";
  if (zone === "utc")
    return d
      .toISOString()
      .replace("T", " ")
      .replace(/\.\d{3}Z$/, " UTC");
  const p = Object.fromEntries(
    local()
      .formatToParts(d)
      .map((x) => [x.type, x.value]),
  );
  return `${p.year}-${p.month}-${p.day} ${p.hour}:${p.minute}:${p.second} ${p.timeZoneName}`;
}

export function relTime(iso: string, now: number): string {
  const diff = now - new Date(iso).getTime();
  const future = diff < 0;
  const s = Math.round(Math.abs(diff) / 1000);
  let text: string;
  // A few seconds either way is clock skew between machines, not the future.
  if (s < 5) return "just now";
  if (s < 60) text = `${s}s`;
  else if (s < 3600) text = `${Math.floor(s / 60)}m`;
  else if (s < 86_400) text = `${Math.floor(s / 3600)}h ${Math.floor((s % 3600) / 60)}m`;
  else text = `${Math.floor(s / 86_400)}d ${Math.floor((s % 86_400) / 3600)}h`;
  return future ? `in ${text}` : `${text} ago`;
}

export function duration(fromIso: string, toIso: string): string {
  const ms = new Date(toIso).getTime() - new Date(fromIso).getTime();
  if (ms < 1000) return `${ms} ms`;
  const s = ms / 1000;
  if (s < 60) return `${s.toFixed(1)} s`;
  return `${Math.floor(s / 60)}m ${Math.round(s % 60)}s`;
}

export function human(value: string | null | undefined): string {
  return value ? value.replaceAll("_", " ") : "—";
}

export function shortId(id: string): string {
  const [prefix, rest] = id.split("_", 2);
  return rest && rest.length > 10 ? `${prefix}_${rest.slice(0, 8)}…` : id;
}

/** Time left until a deadline, as a ticking clock reads: "4:07", "1:02:09"; "0:00" once it has passed. */
export function countdown(ms: number): string {
  const s = Math.max(0, Math.ceil(ms / 1000));
  const mm = String(Math.floor((s % 3600) / 60)).padStart(s >= 3600 ? 2 : 1, "0");
  const ss = String(s % 60).padStart(2, "0");
  return s >= 3600 ? `${Math.floor(s / 3600)}:${mm}:${ss}` : `${mm}:${ss}`;
}
