// Per-key and per-run quotas of the machine API (docs/security/hardening.md#quotas). Each route names its quota in
// apiRoute's `quota` option (lib/api/route.ts), which enters it after the body is parsed and before the
// handler runs, and tells it when the call's work is over. A quota authorizes the caller for the route's
// own action first (a refused caller never touches a counter), and a call past the limit gets 429 with
// Retry-After and changes nothing.
//
// Where the counts live: rates (runs per key per minute, observed reports per run per hour) in one
// fixed-window row per subject in PostgreSQL (quota_windows), moved by one conditional upsert, so every
// replica sees the same count and a refused call writes nothing; operations per run by counting the
// run's unfinished operations (index operations(run_id, state)); event streams in this process.
import "server-only";
import { prisma } from "../../platform/db/prisma";
import { setting, type ConfigName } from "../../platform/config";
import { QuiesceError } from "../../platform/errors";
import { logger } from "../../platform/log";
import { authorize } from "../../platform/auth/authorize";
import type { Principal } from "../../platform/auth/principal";

export interface QuotaCall<B> {
  params: Record<string, string>;
  body: B;
}

/** Handed back when the call may go ahead; `done` is called once, when its work is over. */
export interface QuotaPass {
  /** `applied` false: the call was refused with a 4xx (nothing was written), so it does not count. */
  done(applied: boolean): Promise<void> | void;
}

export interface Quota<B = unknown> {
  readonly name: string;
  /** Throws 429 (rate_limited, with retryAfterSeconds) past the limit, or the caller's 403. */
  readonly enter: (p: Principal, call: QuotaCall<B>) => Promise<QuotaPass>;
}

const FREE: QuotaPass = { done: () => {} };

function overQuota(what: string, retryAfterSeconds: number, limit: number): QuiesceError {
  const wait = Math.max(1, Math.ceil(retryAfterSeconds));
  return new QuiesceError("rate_limited", `quota: ${what} (limit ${limit}); try again in ${wait} s`, { retryAfterSeconds: wait, limit });
}

const log = () => logger("quotas");

// ── fixed windows in PostgreSQL ─────────────────────────────────────────────────────────────────────

/**
 * Counts one call for `subject` in the current window of `windowSeconds` (aligned to the epoch, on the
 * database's clock), unless `limit` calls were already counted there: then nothing is written and the
 * answer is the seconds until the window ends.
 */
async function takeFromWindow(
  subject: string,
  windowSeconds: number,
  limit: number,
): Promise<{ ok: true; windowStart: Date } | { ok: false; retryAfterSeconds: number }> {
  const rows = await prisma().$queryRawUnsafe<{ window_start: Date }[]>(
    `INSERT INTO quota_windows AS q (subject, window_start, used)
     VALUES ($1, to_timestamp(floor(extract(epoch FROM now()) / $2) * $2), 1)
     ON CONFLICT (subject) DO UPDATE SET
       used = CASE WHEN q.window_start < EXCLUDED.window_start THEN 1 ELSE q.used + 1 END,
       window_start = EXCLUDED.window_start
     WHERE q.window_start < EXCLUDED.window_start OR q.used < $3
     RETURNING window_start`,
    subject,
    windowSeconds,
    limit,
  );
  pruneNow();
  if (rows[0]) return { ok: true, windowStart: rows[0].window_start };
  const left = await prisma().$queryRawUnsafe<{ s: number }[]>(
    `SELECT extract(epoch FROM window_start + make_interval(secs => $2) - now())::float8 AS s FROM quota_windows WHERE subject = $1`,
    subject,
    windowSeconds,
  );
  return { ok: false, retryAfterSeconds: left[0]?.s ?? 1 };
}

/** A call that was refused after all (4xx: nothing written) gives its count back, before it is answered. */
async function giveBack(subject: string, windowStart: Date): Promise<void> {
  await prisma()
    .$executeRawUnsafe(
      `UPDATE quota_windows SET used = used - 1 WHERE subject = $1 AND window_start = $2 AND used > 0`,
      subject,
      windowStart,
    )
    .catch((err: unknown) => log().warn({ err, subject }, "could not give back a quota count"));
}

const PRUNE_EVERY_MS = 10 * 60_000;
let lastPrune = 0;
/** Windows end within an hour; rows of windows long over are deleted now and then, off the caller's path. */
function pruneNow(): void {
  const now = Date.now();
  if (now - lastPrune < PRUNE_EVERY_MS) return;
  lastPrune = now;
  prisma()
    .$executeRawUnsafe(`DELETE FROM quota_windows WHERE window_start < now() - interval '2 hours'`)
    .catch((err: unknown) => log().warn({ err }, "could not prune quota windows"));
}

function windowQuota<B>(o: {
  name: string;
  action: Parameters<typeof authorize>[1];
  setting: ConfigName;
  windowSeconds: number;
  what: string;
  /** The counter's subject, or null when the call is not counted (the handler answers it: 404 …). */
  subject: (p: Extract<Principal, { type: "key" }>, call: QuotaCall<B>) => Promise<string | null>;
}): Quota<B> {
  return {
    name: o.name,
    enter: async (p, call) => {
      authorize(p, o.action);
      const limit = setting(o.setting) as number;
      if (p.type !== "key" || limit === 0) return FREE;
      const subject = await o.subject(p, call);
      if (subject === null) return FREE;
      const r = await takeFromWindow(subject, o.windowSeconds, limit);
      if (!r.ok) throw overQuota(o.what, r.retryAfterSeconds, limit);
      return { done: (applied) => (applied ? undefined : giveBack(subject, r.windowStart)) };
    },
  };
}

/** POST /api/v1/runs: runs (roots and children) one key registers per minute. */
export const runRegistrations: Quota = windowQuota({
  name: "runs per key per minute",
  action: "run.register",
  setting: "QUIESCE_QUOTA_RUNS_PER_MINUTE",
  windowSeconds: 60,
  what: "runs registered by this key this minute",
  subject: async (p) => `runs:${p.keyId}`,
});

/** POST /api/v1/runs/{runId}/observed: reports one run receives per hour, whichever key sends them. */
export const observedReports: Quota = windowQuota({
  name: "observed reports per run per hour",
  action: "operation.report",
  setting: "QUIESCE_QUOTA_OBSERVED_PER_RUN",
  windowSeconds: 3600,
  what: "observed reports on this run this hour",
  // Only the team's own runs are counted: another team's (or a missing) run answers 404 as before.
  subject: async (p, call) => {
    const runId = call.params.runId ?? "";
    const rows = await prisma().$queryRawUnsafe<{ team_id: string }[]>(`SELECT team_id FROM runs WHERE id = $1`, runId);
    return rows[0]?.team_id === p.teamId ? `observed:${runId}` : null;
  },
});

// ── unfinished operations per run ───────────────────────────────────────────────────────────────────

/** Retry-After for the quotas that free up as work ends, not at a window's end. */
const BUSY_RETRY_SECONDS = 5;

const runTurns = new Map<string, Promise<void>>();
/**
 * Registrations on one run take turns in this process, from the count to the end of the insert, so
 * racing calls cannot all pass the same count. Across processes the count is still read apart from the
 * insert: each other process can add at most the one registration it has in its turn.
 */
async function turnOnRun(runId: string): Promise<() => void> {
  const before = runTurns.get(runId) ?? Promise.resolve();
  let end!: () => void;
  const ended = new Promise<void>((r) => (end = r));
  const mine = before.then(() => ended);
  runTurns.set(runId, mine);
  await before;
  return () => {
    end();
    if (runTurns.get(runId) === mine) runTurns.delete(runId);
  };
}

/** POST /api/v1/operations: a run may hold this many unfinished operations (queued, scheduled, running). */
export const runOperations: Quota<{ runId: string; operationId: string }> = {
  name: "unfinished operations per run",
  enter: async (p, { body }) => {
    authorize(p, "operation.register");
    const limit = setting("QUIESCE_QUOTA_RUN_OPERATIONS");
    if (p.type !== "key" || limit === 0) return FREE;
    const leave = await turnOnRun(body.runId);
    try {
      const rows = await prisma().$queryRawUnsafe<{ mine: boolean; open: number; known: boolean }[]>(
        `SELECT r.team_id = $2 AS mine,
                (SELECT count(*)::int FROM (SELECT 1 FROM operations o WHERE o.run_id = r.id
                   AND o.state IN ('queued', 'scheduled', 'running') LIMIT $3) s) AS open,
                EXISTS (SELECT 1 FROM operations o WHERE o.team_id = $2 AND o.operation_id = $4) AS known
           FROM runs r WHERE r.id = $1`,
        body.runId,
        p.teamId,
        limit,
        body.operationId,
      );
      const r = rows[0];
      // A missing or another team's run is the handler's 404; a repeated registration its idempotent 200.
      if (r && r.mine && !r.known && r.open >= limit) throw overQuota(`unfinished operations on this run`, BUSY_RETRY_SECONDS, limit);
    } catch (err) {
      leave();
      throw err;
    }
    return { done: leave };
  },
};

// ── event streams, per process ──────────────────────────────────────────────────────────────────────

const openStreams = new Map<string, number>();

/** Event streams this process holds open for the key (the tests read it). */
export function openEventStreams(keyId: string): number {
  return openStreams.get(keyId) ?? 0;
}

/** GET /api/v1/runs/{runId}/events: streams one key holds open at once in this process. */
export const eventStreams: Quota = {
  name: "event streams per key",
  enter: async (p) => {
    authorize(p, "run.read");
    const limit = setting("QUIESCE_QUOTA_EVENT_STREAMS");
    if (p.type !== "key" || limit === 0) return FREE;
    const n = openStreams.get(p.keyId) ?? 0;
    if (n >= limit) throw overQuota("event streams open for this key", BUSY_RETRY_SECONDS, limit);
    openStreams.set(p.keyId, n + 1);
    let open = true;
    return {
      done: () => {
        if (!open) return;
        open = false;
        const left = (openStreams.get(p.keyId) ?? 1) - 1;
        if (left > 0) openStreams.set(p.keyId, left);
        else openStreams.delete(p.keyId);
      },
    };
  },
};
