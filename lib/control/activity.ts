// A run's activity (docs/console.md#run-activity): what an operator needs to tell apart before a stop —
// a run doing something now, a live run waiting, and a run nobody has heard from. Pure: the facts and
// `now` are parameters; the runs list's SQL filter mirrors it (lib/modules/runs/internal/activity-sql.ts).
import { runStatus } from "./fleet";
import type { Lifecycle } from "./types";

export const ACTIVITIES = ["working", "idle", "stale", "paused", "killed", "finished"] as const;
export type Activity = (typeof ACTIVITIES)[number];
/** What the runs list filters on: the activities of a run that is neither paused nor ended. */
export const LIVE_ACTIVITIES = ["working", "idle", "stale"] as const;
export type LiveActivity = (typeof LIVE_ACTIVITIES)[number];

/** A gate call (or admission, heartbeat, report) this recent counts as working even with nothing in flight. */
export const WORKING_WITHIN_MS = 60_000;
/** Silence longer than this reads stale, whatever the lease allows: a live agent calls or heartbeats far more often. */
export const STALE_AFTER_MS = 15 * 60_000;

export interface ActivityFacts {
  lifecycle: Lifecycle;
  /** epoch ms, or null while the run has not ended */
  finishedAt: number | null;
  /** its operations in flight (state running) */
  running: number;
  /** epoch ms: registration, the first thing heard from every run */
  createdAt: number;
  /** epoch ms: runs.last_heartbeat_at (set by operation heartbeats) */
  lastHeartbeatAt: number | null;
  /** epoch ms: its latest gate decision of any source (gate, admit, heartbeat, complete, report) */
  lastDecisionAt: number | null;
  /** its latest lease, or null when it has none */
  lease: { validUntil: number; ttlSeconds: number; revoked: boolean } | null;
}

/**
 * When the run was last heard from: registration, a heartbeat, a gate decision, or the lease's last renewal
 * (validUntil − ttl, never later than the renewal itself, since renewal sets validUntil to at most now + ttl).
 */
export function lastHeardAt(f: ActivityFacts): number {
  const renewed = f.lease ? f.lease.validUntil - f.lease.ttlSeconds * 1000 : -Infinity;
  return Math.max(f.createdAt, f.lastHeartbeatAt ?? -Infinity, f.lastDecisionAt ?? -Infinity, renewed);
}

/** The silence after which a live run reads stale: STALE_AFTER_MS, or its lease's idle window when shorter. */
export function staleAfterMs(f: Pick<ActivityFacts, "lease">): number {
  return f.lease ? Math.min(STALE_AFTER_MS, f.lease.ttlSeconds * 1000) : STALE_AFTER_MS;
}

/**
 * killed, finished and paused as the lifecycle says (killed wins over finished, as runStatus); otherwise
 * working (calls in flight, or a gate decision within WORKING_WITHIN_MS), stale (its lease lapsed or is
 * missing, or nothing heard for staleAfterMs), else idle.
 */
export function runActivity(f: ActivityFacts, now: number): Activity {
  const status = runStatus(f);
  if (status !== "active") return status;
  if (f.running > 0) return "working";
  if (f.lastDecisionAt !== null && now - f.lastDecisionAt < WORKING_WITHIN_MS) return "working";
  if (!f.lease || f.lease.revoked || f.lease.validUntil <= now) return "stale";
  return now - lastHeardAt(f) > staleAfterMs(f) ? "stale" : "idle";
}

/** What each activity means, in one line (the console's legend and each badge's title). */
export const ACTIVITY_MEANING: Record<Activity, string> = {
  working: "calls in flight, or a gate call in the last minute",
  idle: "alive and heard from recently, nothing in flight",
  stale: "nothing heard for 15 minutes (or its lease's idle window), or its lease has lapsed",
  paused: "paused by a person: new calls are held",
  killed: "killed: every call is denied",
  finished: "the harness said the run ended",
};
