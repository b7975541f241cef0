// The runs list's query (docs/console.md#runs-list): every filter, the sort and the page cursor live in the
// URL, so a view can be shared and saved. A URL is read leniently: each parameter is checked on its
// own and one that does not parse is ignored (and named back to the page), never an error page.
import { z } from "zod";
import { BREAKER_STATES, HARNESSES, LIFECYCLES } from "../control/types";
import { RUN_STATUSES } from "../control/fleet";
import { LIVE_ACTIVITIES } from "../control/activity";
import type { StopFilterInput } from "./stops";

export const RUNS_SORTS = ["newest", "oldest", "task"] as const;
export type RunsSort = (typeof RUNS_SORTS)[number];

/** A page boundary: the last (after) or first (before) row of a page, for the sort it was issued under. */
export interface RunsCursor {
  dir: "after" | "before";
  sort: RunsSort;
  /** the sort column's value: an ISO time for newest/oldest, the task id for task */
  value: string;
  id: string;
}

/** NUL and lone surrogates never reach the database (PostgreSQL refuses them: that would be a 500). */
const UNSAFE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const safe = (s: string) => !UNSAFE.test(s);
const Text = (max: number) => z.string().trim().min(1).max(max).refine(safe, "contains a character that is not allowed");
/** A time the database can hold, between 1970 and 9999. */
function sensibleTime(s: string): boolean {
  const t = Date.parse(s);
  return !Number.isNaN(t) && t >= 0 && t < Date.UTC(10_000, 0, 1);
}
const Time = z
  .string()
  .trim()
  .max(40)
  .refine((s) => /^\d{4}-\d{2}-\d{2}([T ][\d:.]+(Z|[+-]\d{2}:?\d{2})?)?$/.test(s) && sensibleTime(s), "not a date or ISO time")
  .transform((s) => new Date(s));

/** One schema per URL parameter (checked independently). */
const FIELDS = {
  status: z.enum(RUN_STATUSES),
  activity: z.enum(LIVE_ACTIVITIES),
  lifecycle: z.enum(LIFECYCLES),
  breaker: z.enum(BREAKER_STATES),
  harness: z.enum(HARNESSES),
  agent: Text(200),
  from: Time,
  to: Time,
  q: Text(200),
  roots: z.enum(["1", "true"]).transform(() => true as const),
  sort: z.enum(RUNS_SORTS),
  cursor: Text(1000),
} as const;

/** The URL parameters a view is made of (a saved view keeps these; the cursor is a position, not a view). */
export const VIEW_KEYS = ["status", "activity", "lifecycle", "breaker", "harness", "agent", "from", "to", "q", "roots", "sort"] as const;
export const RUNS_QUERY_KEYS = [...VIEW_KEYS, "cursor"] as const;

export interface RunsListQuery {
  status?: (typeof RUN_STATUSES)[number];
  /** working, idle or stale at the moment of reading (lib/control/activity.ts) */
  activity?: (typeof LIVE_ACTIVITIES)[number];
  lifecycle?: (typeof LIFECYCLES)[number];
  breaker?: (typeof BREAKER_STATES)[number];
  harness?: (typeof HARNESSES)[number];
  agent?: string;
  from?: Date;
  to?: Date;
  q?: string;
  roots?: true;
  sort?: RunsSort;
  cursor?: RunsCursor;
}

export interface ParsedRunsQuery {
  query: RunsListQuery;
  /** parameters that were present but did not parse, with why (shown on the page; nothing else happens) */
  ignored: { key: string; message: string }[];
}

function b64urlEncode(s: string): string {
  const bytes = new TextEncoder().encode(s);
  let bin = "";
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}
function b64urlDecode(s: string): string {
  if (!/^[A-Za-z0-9_-]*$/.test(s)) throw new Error("not base64url");
  const bin = atob(s.replace(/-/g, "+").replace(/_/g, "/"));
  return new TextDecoder("utf-8", { fatal: true }).decode(Uint8Array.from(bin, (c) => c.charCodeAt(0)));
}

const CursorShape = z.tuple([z.enum(["a", "b"]), z.enum(RUNS_SORTS), z.string().max(300), z.string().min(1).max(200)]);

export function encodeRunsCursor(c: RunsCursor): string {
  return b64urlEncode(JSON.stringify([c.dir === "after" ? "a" : "b", c.sort, c.value, c.id]));
}

/** null when the text is not a cursor this list issued. */
export function decodeRunsCursor(text: string): RunsCursor | null {
  try {
    const t = CursorShape.safeParse(JSON.parse(b64urlDecode(text)));
    if (!t.success) return null;
    const [d, sort, raw, id] = t.data;
    if (!safe(raw) || !safe(id)) return null;
    if (sort !== "task" && !sensibleTime(raw)) return null;
    const value = sort === "task" ? raw : new Date(raw).toISOString();
    return { dir: d === "a" ? "after" : "before", sort, value, id };
  } catch {
    return null;
  }
}

type Raw = Record<string, string | string[] | undefined | null>;

/** Reads the list's URL parameters; unknown parameters are left alone, bad ones are ignored and named. */
export function parseRunsQuery(raw: Raw | URLSearchParams): ParsedRunsQuery {
  const get = (k: string): string | undefined => {
    if (raw instanceof URLSearchParams) return raw.get(k) ?? undefined;
    const v = raw[k];
    return (Array.isArray(v) ? v[0] : v) ?? undefined;
  };
  const query: Record<string, unknown> = {};
  const ignored: ParsedRunsQuery["ignored"] = [];
  for (const key of RUNS_QUERY_KEYS) {
    const v = get(key);
    if (v === undefined || v === "") continue;
    const r = FIELDS[key].safeParse(v);
    if (!r.success) {
      ignored.push({ key, message: r.error.issues[0]?.message ?? "invalid" });
      continue;
    }
    query[key] = r.data;
  }
  const q = query as RunsListQuery & { cursor?: unknown };
  if (typeof q.cursor === "string") {
    const c = decodeRunsCursor(q.cursor);
    if (!c) {
      ignored.push({ key: "cursor", message: "not a cursor this list issued" });
      delete q.cursor;
    } else if (c.sort !== (q.sort ?? "newest")) {
      ignored.push({ key: "cursor", message: "issued for another sort" });
      delete q.cursor;
    } else q.cursor = c;
  }
  if (q.from && q.to && q.from >= q.to) {
    ignored.push({ key: "to", message: "must be later than from" });
    delete q.to;
  }
  return { query: q, ignored };
}

/** The canonical query string of a view: known, valid parameters only, in a fixed order, no cursor. */
export function viewQueryString(raw: Raw | URLSearchParams): string {
  const { query } = parseRunsQuery(raw);
  const out = new URLSearchParams();
  for (const k of VIEW_KEYS) {
    const v = query[k];
    if (v === undefined) continue;
    if (v instanceof Date) {
      const orig = raw instanceof URLSearchParams ? raw.get(k) : raw[k];
      out.set(k, (Array.isArray(orig) ? orig[0] : orig)?.trim() ?? v.toISOString());
    } else out.set(k, v === true ? "1" : String(v));
  }
  return out.toString();
}

/**
 * The list's filters as a fleet-stop filter ("select all N matching"), or null when one of them has no
 * such form (search, breaker, activity — a moment, not a rule the gate can hold — lifecycle and status together). A stop covers a matching run and what it delegated (docs/fleet-stop.md).
 */
export function stopFilterOf(query: RunsListQuery): StopFilterInput | null {
  if (query.q || query.breaker || query.activity || (query.status && query.lifecycle)) return null;
  const f: StopFilterInput = {};
  // A stop never covers finished or killed runs, so lifecycle normal/paused read as active/paused.
  const status = query.status ?? (query.lifecycle === "normal" ? "active" : query.lifecycle);
  if (status) f.status = [status];
  if (query.harness) f.harness = [query.harness];
  if (query.agent) f.agent = [query.agent];
  if (query.from) f.createdAfter = query.from.toISOString();
  if (query.to) f.createdBefore = query.to.toISOString();
  return f;
}
