// A fleet stop's barriers started in batches (docs/fleet-stop.md#at-scale): many targets' kills in ONE
// transaction — one statement per table (runs killed, leases revoked, settlements and barriers created),
// the targets linked to their barriers, the run.killed events and notifications, and every target's
// run.kill audit row appended under one acquisition of the team's audit lock (quiesce_append_audits) as
// the last statement — then the queued work of all of them cancelled in a second transaction, as the
// single kill does (lib/modules/stop/kill.ts). Each target still gets its own barrier, with the same rows a single
// kill writes, so its receipt is proven by the same evidence (lib/modules/stop/internal/evidence.ts).
//
// Serialization is the single kill's: every target tree's lock, exclusively, in one sorted order (two
// batches, or a batch and a single kill, never wait on each other in a cycle), then the team's audit lock
// last. Under the locks each target is read again: one killed meanwhile (by a single kill or by another
// engine's batch) is linked to the barrier that covers it — one barrier per run, never two.
import "server-only";
import { randomUUID } from "node:crypto";
import { withPgTransaction, type PgQuery } from "../../platform/db/pool-tx";
import { newId } from "../../platform/ids";
import { forbidden } from "../../platform/errors";
import { barrierPolicy } from "../../control/barrier";
import { authorize } from "../../platform/auth/authorize";
import type { Principal } from "../../platform/auth/principal";
import { appendAudits } from "../audit/audit";
import { CONTROL_CHANNEL, controlPayload } from "../../platform/db/notify";
import { cloudEvent, type EventType } from "../webhooks/events";
import { cancelQueueJobs } from "./queue-jobs";

export interface BatchKillResult {
  /** Barriers this batch created, by target run. */
  started: Map<string, string>;
  /** Targets already covered by a barrier (killed meanwhile): linked to it. */
  existing: Map<string, string>;
  /** Targets the batch leaves to the single kill (a target under another target of the same batch, a
   * killed run without a barrier, a run not found): the caller kills them one by one. */
  single: string[];
}

interface TargetRow {
  id: string;
  root_run_id: string;
  path: string[];
  lifecycle: string;
  epoch: number;
  killed_above: boolean;
  covering: string | null;
  root_lease: string | null;
  subtree: string[];
}

/** Events for many runs in one statement (the one-event form is lib/modules/webhooks/emit.ts). */
async function emitEvents(
  q: PgQuery,
  teamId: string,
  events: { type: EventType; runId: string; subject?: string; data: Record<string, unknown> }[],
): Promise<void> {
  if (events.length === 0) return;
  const rows = events.map((e) => {
    const id = randomUUID();
    const json = cloudEvent({
      id,
      teamId,
      type: e.type,
      subject: e.subject ?? e.runId,
      time: new Date(),
      data: { run_id: e.runId, ...e.data },
    });
    return { id, type: e.type, key: e.runId, json: JSON.stringify(json) };
  });
  await q(
    `INSERT INTO webhook_deliveries (event_id, endpoint_id, team_id, type, ordering_key, event)
     SELECT e.id, w.id, w.team_id, e.type, e.key, e.json::jsonb
       FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) WITH ORDINALITY AS e(id, type, key, json, n)
       JOIN webhook_endpoints w ON w.team_id = $5 AND w.enabled AND (e.type = ANY (w.event_types) OR '*' = ANY (w.event_types))
      ORDER BY e.n, w.id`,
    [rows.map((r) => r.id), rows.map((r) => r.type), rows.map((r) => r.key), rows.map((r) => r.json), teamId],
  );
}

/**
 * Starts the barriers of `runIds` (one team's targets of one kill scope) in one transaction, on behalf of
 * `requestedBy`, and links each target row to its barrier in the same transaction. Throws when the
 * transaction fails (nothing of it is written): the caller retries or falls back to single kills.
 */
export async function killTargetsBatch(
  p: Principal,
  scope: { id: string; teamId: string; reason: string; requestedBy: string },
  runIds: string[],
): Promise<BatchKillResult> {
  authorize(p, "run.kill");
  if (p.type !== "system") throw forbidden("a fleet stop's batch is started by the barrier engine");
  const why = `fleet stop ${scope.id}: ${scope.reason}`.slice(0, 2000);
  const actor = scope.requestedBy;
  const out: BatchKillResult = { started: new Map(), existing: new Map(), single: [] };
  const result = await withPgTransaction(async (q) => {
    // Every target tree's lock, exclusively, in sorted order (the gate takes the same keys shared).
    await q(
      `SELECT count(pg_advisory_xact_lock(hashtextextended(x.root_run_id, 0)))::int AS n
         FROM (SELECT DISTINCT root_run_id FROM runs WHERE id = ANY ($1::text[]) AND team_id = $2 ORDER BY root_run_id) x`,
      [runIds, scope.teamId],
    );
    // Under the locks: each target's ancestry, first lease, covering barrier and subtree.
    const rows = await q<TargetRow>(
      `SELECT t.id, t.root_run_id, t.path, t.lifecycle::text AS lifecycle, t.epoch,
              EXISTS (SELECT 1 FROM runs a WHERE a.id = ANY (t.path) AND a.lifecycle = 'killed') AS killed_above,
              (SELECT b.id FROM barriers b WHERE b.run_id = ANY (t.path) ORDER BY b.requested_at DESC LIMIT 1) AS covering,
              (SELECT l.id FROM leases l WHERE l.run_id = t.id ORDER BY l.created_at LIMIT 1) AS root_lease,
              ARRAY(SELECT c.id FROM runs c WHERE c.root_run_id = t.root_run_id AND t.id = ANY (c.path) ORDER BY c.depth, c.id) AS subtree
         FROM runs t WHERE t.id = ANY ($1::text[]) AND t.team_id = $2`,
      [runIds, scope.teamId],
    );
    const found = new Map(rows.map((r) => [r.id, r]));
    const inBatch = new Set(runIds);
    const fresh: TargetRow[] = [];
    for (const id of runIds) {
      const r = found.get(id);
      if (!r) out.single.push(id);
      else if (r.killed_above) {
        if (r.covering) out.existing.set(id, r.covering);
        else out.single.push(id);
      } else if (r.path.some((a) => a !== id && inBatch.has(a))) out.single.push(id);
      else fresh.push(r);
    }
    const barrierIds = fresh.map(() => newId("stop"));
    const requestedAt = new Date();
    const counts = new Map<string, { runs: number; leases: number; in_flight: number }>();
    if (fresh.length > 0) {
      // ONE statement for the dispatch stop of every fresh target: the same rows killRun writes for one.
      const rowsOut = await q<{ id: string; runs: number; leases: number; in_flight: number }>(
        `WITH t AS (
           SELECT * FROM unnest($1::text[], $2::text[], $3::int[], $4::jsonb[]) AS t(run_id, barrier_id, new_epoch, policy)),
         sub AS (
           SELECT t.barrier_id, c.id FROM t JOIN runs tr ON tr.id = t.run_id
             JOIN runs c ON c.root_run_id = tr.root_run_id AND t.run_id = ANY (c.path)),
         r AS (
           UPDATE runs SET lifecycle = 'killed', epoch = runs.epoch + 1, lifecycle_changed_at = clock_timestamp(),
                  lifecycle_changed_by = $5, lifecycle_reason = $6
             FROM sub WHERE runs.id = sub.id RETURNING sub.barrier_id),
         l AS (
           UPDATE leases SET revoked_at = clock_timestamp(), revoked_by = sub.barrier_id
             FROM sub WHERE leases.run_id = sub.id AND leases.revoked_at IS NULL RETURNING sub.barrier_id),
         s AS (
           INSERT INTO settlements (id, barrier_id, operation_id, state_at_barrier, effect_expected)
           SELECT 'set_' || replace(gen_random_uuid()::text, '-', ''), sub.barrier_id, x.id, 'running', 'absence'
             FROM sub JOIN operations x ON x.run_id = sub.id AND x.state = 'running'
            -- not already being settled by an earlier barrier of a subtree
            WHERE NOT EXISTS (SELECT 1 FROM settlements p WHERE p.operation_id = x.id AND p.settled_state IS NULL)
           RETURNING barrier_id),
         b AS (
           INSERT INTO barriers (id, team_id, run_id, requested_at, requested_by, reason, new_epoch, policy, phase,
                                 runs_killed, leases_revoked, in_flight, dispatch_stopped_at)
           SELECT t.barrier_id, $7, t.run_id, $8, $5, $6, t.new_epoch, t.policy, 'revoking',
                  (SELECT count(*) FROM r WHERE r.barrier_id = t.barrier_id),
                  (SELECT count(*) FROM l WHERE l.barrier_id = t.barrier_id),
                  (SELECT count(*) FROM s WHERE s.barrier_id = t.barrier_id), clock_timestamp()
             FROM t
           RETURNING id, runs_killed, leases_revoked, in_flight),
         linked AS (
           UPDATE stop_scope_targets st SET barrier_id = t.barrier_id, error = NULL
             FROM t WHERE st.scope_id = $9 AND st.run_id = t.run_id RETURNING 1)
         SELECT b.id, b.runs_killed AS runs, b.leases_revoked AS leases, b.in_flight, (SELECT count(*) FROM linked)::int AS linked FROM b`,
        [
          fresh.map((r) => r.id),
          barrierIds,
          fresh.map((r) => r.epoch + 1),
          fresh.map((r) => JSON.stringify(barrierPolicy({ rootLeaseId: r.root_lease ?? null, newEpoch: r.epoch + 1 }))),
          actor,
          why,
          scope.teamId,
          requestedAt,
          scope.id,
        ],
      );
      for (const r of rowsOut) counts.set(r.id, { runs: Number(r.runs), leases: Number(r.leases), in_flight: Number(r.in_flight) });
    }
    if (out.existing.size > 0) {
      await q(
        `UPDATE stop_scope_targets st SET barrier_id = x.b, error = NULL
           FROM unnest($2::text[], $3::text[]) AS x(r, b) WHERE st.scope_id = $1 AND st.run_id = x.r`,
        [scope.id, [...out.existing.keys()], [...out.existing.values()]],
      );
    }
    if (fresh.length === 0) return [];
    await emitEvents(
      q,
      scope.teamId,
      fresh.map((r, i) => ({
        type: "run.killed" as const,
        runId: r.id,
        data: { barrier_id: barrierIds[i], by: actor, reason: why, runs_killed: r.subtree.length, epoch: r.epoch + 1 },
      })),
    );
    await q(`SELECT count(pg_notify($1, x))::int AS n FROM unnest($2::text[]) AS x`, [
      CONTROL_CHANNEL,
      fresh.map((r, i) =>
        controlPayload({ kind: "kill", teamId: scope.teamId, rootRunId: r.root_run_id, runIds: r.subtree, barrierId: barrierIds[i] }),
      ),
    ]);
    // Last: the team's audit lock, once for the whole batch, held only until COMMIT.
    await appendAudits(
      q,
      scope.teamId,
      fresh.map((r, i) => {
        const c = counts.get(barrierIds[i]!);
        return {
          actor,
          action: "run.kill",
          target: r.id,
          before: { lifecycle: r.lifecycle, epoch: r.epoch },
          after: {
            lifecycle: "killed",
            epoch: r.epoch + 1,
            barrierId: barrierIds[i],
            runsKilled: c?.runs,
            leasesRevoked: c?.leases,
            inFlight: c?.in_flight,
            reason: why,
          },
        };
      }),
    );
    return fresh.map((r, i) => [r.id, barrierIds[i]!] as const);
  });
  for (const [runId, barrierId] of result) out.started.set(runId, barrierId);
  return out;
}

type QueueJob = { providerName: string; providerJobId: string };

/**
 * The kill's second step (lib/modules/stop/kill.ts cancelQueuedWork) for many barriers in one transaction: every
 * queued / scheduled operation of each barrier's subtree → cancelled_not_started, the counters,
 * queued_cancelled_at, the barrier.dispatch_stopped events and notifications; then the jobs of real
 * queues. Serialized per barrier with the single form (the same `queued:<id>` keys, sorted), idempotent.
 * The barriers' subtrees must not overlap (killTargetsBatch never starts nested targets together).
 */
export async function cancelQueuedWorkBatch(barrierIds: string[]): Promise<number> {
  if (barrierIds.length === 0) return 0;
  const { rows, jobs } = await withPgTransaction(async (q) => {
    await q(
      `SELECT count(pg_advisory_xact_lock(hashtextextended('queued:' || x, 3)))::int AS n FROM (SELECT unnest($1::text[]) AS x ORDER BY 1) s`,
      [barrierIds],
    );
    const rows = await q<{
      id: string;
      team_id: string;
      run_id: string;
      root_run_id: string;
      queued: number;
      scheduled: number;
      retries: number;
      leases: number;
      in_flight: number;
    }>(
      `WITH b AS (
         SELECT b.id, b.team_id, b.run_id, r.root_run_id FROM barriers b JOIN runs r ON r.id = b.run_id
          WHERE b.id = ANY ($1::text[]) AND b.queued_cancelled_at IS NULL),
       sub AS (
         SELECT b.id AS barrier_id, b.run_id AS target, c.id FROM b JOIN runs c ON c.root_run_id = b.root_run_id AND b.run_id = ANY (c.path)),
       o AS (
         UPDATE operations SET state = 'cancelled_not_started', finished_at = clock_timestamp(),
                state_reason = CASE WHEN operations.kind IN ('scheduled', 'retry') THEN 'stale_epoch'
                                    WHEN operations.run_id = sub.target THEN 'killed' ELSE 'parent_revoked' END
           FROM sub WHERE operations.run_id = sub.id AND operations.state IN ('queued', 'scheduled')
         RETURNING sub.barrier_id, operations.kind, operations.provider_name, operations.provider_job_id),
       oc AS (
         SELECT barrier_id, count(*) FILTER (WHERE kind IN ('queued', 'call')) AS queued,
                count(*) FILTER (WHERE kind = 'scheduled') AS scheduled, count(*) FILTER (WHERE kind = 'retry') AS retries
           FROM o GROUP BY barrier_id),
       u AS (
         UPDATE barriers SET queued_cancelled = coalesce(oc.queued, 0), scheduled_cancelled = coalesce(oc.scheduled, 0),
                retries_cancelled = coalesce(oc.retries, 0), queued_cancelled_at = clock_timestamp()
           FROM b LEFT JOIN oc ON oc.barrier_id = b.id
          WHERE barriers.id = b.id
         RETURNING barriers.id, barriers.team_id, barriers.run_id, b.root_run_id, barriers.queued_cancelled, barriers.scheduled_cancelled,
                   barriers.retries_cancelled, barriers.leases_revoked, barriers.in_flight)
       SELECT u.id, u.team_id, u.run_id, u.root_run_id, u.queued_cancelled::int AS queued, u.scheduled_cancelled::int AS scheduled,
              u.retries_cancelled::int AS retries, u.leases_revoked::int AS leases, u.in_flight::int AS in_flight,
              (SELECT json_agg(json_build_object('providerName', provider_name, 'providerJobId', provider_job_id)) FROM o
                WHERE provider_job_id IS NOT NULL AND (provider_name LIKE 'pg-boss:%' OR provider_name LIKE 'bullmq:%')) AS queue_jobs
         FROM u`,
      [barrierIds],
    );
    if (rows.length === 0) return { rows, jobs: [] as QueueJob[] };
    const byTeam = new Map<string, typeof rows>();
    for (const r of rows) byTeam.set(r.team_id, [...(byTeam.get(r.team_id) ?? []), r]);
    for (const [teamId, rs] of byTeam) {
      await emitEvents(
        q,
        teamId,
        rs.map((c) => ({
          type: "barrier.dispatch_stopped" as const,
          runId: c.run_id,
          subject: c.id,
          data: {
            barrier_id: c.id,
            leases_revoked: c.leases,
            queued_cancelled: c.queued,
            scheduled_cancelled: c.scheduled,
            retries_cancelled: c.retries,
            in_flight: c.in_flight,
          },
        })),
      );
    }
    await q(`SELECT count(pg_notify($1, x))::int AS n FROM unnest($2::text[]) AS x`, [
      CONTROL_CHANNEL,
      rows.map((c) => controlPayload({ kind: "barrier", teamId: c.team_id, rootRunId: c.root_run_id, barrierId: c.id })),
    ]);
    const first = rows[0] as unknown as { queue_jobs: QueueJob[] | null };
    return { rows, jobs: first.queue_jobs ?? [] };
  });
  // Outbound after commit; failures are retried by the barrier engine's revoking step.
  if (jobs.length) await cancelQueueJobs(jobs).catch(() => {});
  return rows.reduce((n, r) => n + r.queued + r.scheduled + r.retries, 0);
}
