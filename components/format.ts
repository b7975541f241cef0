// Formatting shared by server and client components. Absolute times are UTC so the server render and
// the browser agree (no hydration mismatch) and so two people on a call read the same clock.

export function absTime(iso: string | null | undefined): string {
  if (!iso) return "—";
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return "—";
  return d
    .toISOString()
    .replace("T", " ")
    .replace(/\.\d{3}Z$/, " UTC");
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
