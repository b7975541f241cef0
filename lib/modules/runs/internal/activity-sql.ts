// A run's activity facts in SQL (docs/console.md#run-activity): one LATERAL per run, each fact one index
// probe — running calls (operations (run_id, state)), the latest gate decision (gate_decisions (team_id,
// run_id, at), read backwards) and the latest lease (leases (run_id)) — so a page of 50 costs 150 probes.
// The rule itself is lib/control/activity.ts; activityPredicate mirrors it for the list's filter, and
// lib/modules/runs/console/runs-list.test.ts checks both agree on generated runs.
import "server-only";
import { prisma } from "../../../platform/db/prisma";
import {
  lastHeardAt,
  runActivity,
  STALE_AFTER_MS,
  WORKING_WITHIN_MS,
  type Activity,
  type ActivityFacts,
  type LiveActivity,
} from "../../../control/activity";
import type { Lifecycle } from "../../../control/types";

/** What the console's run reads add about activity: the runs list's rows and the run page's tree nodes. */
export interface RunActivityView {
  activity: Activity;
  /** ISO time: the latest of registration, heartbeat, gate decision, lease renewal (lib/control/activity.ts lastHeardAt) */
  lastHeardAt: string;
  /** its calls in flight */
  running: number;
}

/** The facts of run `r` as `f` (running, last_decision_at, lease_valid_until, lease_ttl_seconds, lease_revoked). */
export const ACTIVITY_LATERAL = `
  CROSS JOIN LATERAL (
    SELECT (SELECT count(*) FROM operations o WHERE o.run_id = r.id AND o.state = 'running')::int AS running,
           (SELECT max(g.at) FROM gate_decisions g WHERE g.team_id = r.team_id AND g.run_id = r.id) AS last_decision_at,
           l.valid_until AS lease_valid_until, l.ttl_seconds AS lease_ttl_seconds, l.revoked_at IS NOT NULL AS lease_revoked
      FROM (SELECT 1) one
      LEFT JOIN LATERAL (SELECT x.valid_until, x.ttl_seconds, x.revoked_at FROM leases x WHERE x.run_id = r.id
                          ORDER BY x.created_at DESC, x.id DESC LIMIT 1) l ON true) f`;

/** The columns a reader selects beside `r.*` to build ActivityFacts (activityFactsOf). */
export const ACTIVITY_COLUMNS = `f.running, f.last_decision_at, f.lease_valid_until, f.lease_ttl_seconds, f.lease_revoked`;

export interface ActivityDbRow {
  lifecycle: Lifecycle;
  finished_at: Date | null;
  created_at: Date;
  last_heartbeat_at: Date | null;
  running: number;
  last_decision_at: Date | null;
  lease_valid_until: Date | null;
  lease_ttl_seconds: number | null;
  lease_revoked: boolean | null;
}

export function activityFactsOf(r: ActivityDbRow): ActivityFacts {
  return {
    lifecycle: r.lifecycle,
    finishedAt: r.finished_at?.getTime() ?? null,
    running: r.running,
    createdAt: r.created_at.getTime(),
    lastHeartbeatAt: r.last_heartbeat_at?.getTime() ?? null,
    lastDecisionAt: r.last_decision_at?.getTime() ?? null,
    lease:
      r.lease_valid_until && r.lease_ttl_seconds !== null
        ? { validUntil: r.lease_valid_until.getTime(), ttlSeconds: r.lease_ttl_seconds, revoked: r.lease_revoked === true }
        : null,
  };
}

/** The read shape's activity fields. */
export function runActivityView(f: ActivityFacts, now: number): RunActivityView {
  return { activity: runActivity(f, now), lastHeardAt: new Date(lastHeardAt(f)).toISOString(), running: f.running };
}

/** The activity of each of these runs of the team at `now` (the run page's tree), in one statement. */
export async function readActivity(teamId: string, runIds: readonly string[], now: number): Promise<Map<string, RunActivityView>> {
  const rows = await prisma().$queryRawUnsafe<(ActivityDbRow & { id: string })[]>(
    `SELECT r.id, r.lifecycle::text AS lifecycle, r.finished_at, r.created_at, r.last_heartbeat_at, ${ACTIVITY_COLUMNS}
       FROM runs r ${ACTIVITY_LATERAL}
      WHERE r.team_id = $1 AND r.id = ANY ($2::text[])`,
    teamId,
    [...runIds],
  );
  return new Map(rows.map((r) => [r.id, runActivityView(activityFactsOf(r), now)]));
}

/**
 * The predicate "run `r` has this live activity at `now`" (`now` a timestamptz parameter): runActivity
 * (lib/control/activity.ts) in SQL. Only live runs (lifecycle normal, not finished) have one. Written with
 * EXISTS probes cheapest first rather than the LATERAL, so a run that is working is judged by one or two
 * index probes and its lease is read only when the answer depends on it.
 */
export function activityPredicate(activity: LiveActivity, now: string): string {
  const live = `r.lifecycle = 'normal' AND r.finished_at IS NULL`;
  const working = `(EXISTS (SELECT 1 FROM operations o WHERE o.run_id = r.id AND o.state = 'running')
      OR EXISTS (SELECT 1 FROM gate_decisions g WHERE g.team_id = r.team_id AND g.run_id = r.id
                    AND g.at > ${now} - interval '${WORKING_WITHIN_MS} milliseconds'))`;
  // Idle: the latest lease holds and something was heard within the stale window (any one source is enough).
  const window = `least(interval '${STALE_AFTER_MS} milliseconds', make_interval(secs => l.ttl_seconds))`;
  const idle = `EXISTS (
      SELECT 1 FROM (SELECT x.valid_until, x.ttl_seconds, x.revoked_at FROM leases x WHERE x.run_id = r.id
                      ORDER BY x.created_at DESC, x.id DESC LIMIT 1) l
       WHERE l.revoked_at IS NULL AND l.valid_until > ${now}
         AND (r.created_at >= ${now} - ${window} OR r.last_heartbeat_at >= ${now} - ${window}
              OR l.valid_until - make_interval(secs => l.ttl_seconds) >= ${now} - ${window}
              OR EXISTS (SELECT 1 FROM gate_decisions g WHERE g.team_id = r.team_id AND g.run_id = r.id AND g.at >= ${now} - ${window})))`;
  switch (activity) {
    case "working":
      return `(${live} AND ${working})`;
    case "idle":
      return `(${live} AND NOT ${working} AND ${idle})`;
    case "stale":
      return `(${live} AND NOT ${working} AND NOT ${idle})`;
  }
}
