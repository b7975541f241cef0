// Kill = the cancellation barrier (docs/architecture.md#the-cancellation-barrier,
// docs/ideas.md#barriers `cancellation_barrier`).
//
// Scope decision: the barrier covers the KILLED run's subtree (the run and its descendants, by
// runs.path), not the whole tree from the root. Killing a child stops that child's authority and
// everything it delegated; its parent keeps running. Killing the root covers the whole tree.
// The tree lock is always the ROOT's key (the gate takes it shared for every run of the tree).
//
// Two transactions, in this order (docs/barrier-and-receipts.md#kill-the-barrier-transaction):
//
// 1. Dispatch stop, under the tree lock: Barrier row (phase revoking, policy, new epoch) → every run of
//    the subtree killed with epoch + 1 → every lease revoked (revoked_by = barrier id) → one Settlement
//    per running operation → audit row → run.killed event → NOTIFY. When it commits, every gate, admit
//    and heartbeat under the subtree is denied (killed / parent_revoked): queued work can no longer
//    start, whatever its row still says. This is "dispatch stopped" (barriers.dispatch_stopped_at).
// 2. Queued work cancelled, right after, without the tree lock (siblings of a killed child keep being
//    decided meanwhile): every queued / scheduled operation of the subtree → cancelled_not_started
//    (kept, with the gate reason a late dequeue will get), the counters, queued_cancelled_at, the
//    barrier.dispatch_stopped event, NOTIFY. A tree holding 10 000 queued operations is one UPDATE —
//    the expensive one, which is why it is not inside (1). Jobs in real queues (pg-boss / bullmq) are
//    cancelled after it commits.
//
// killRun returns after both. (2) is idempotent and serialized per barrier: the barrier engine's
// revoking step runs it too (and must finish it before settling), so a crash between (1) and (2)
// loses nothing; a gate call that meets a still-queued operation in between denies it (state denied).
import "server-only";
import { withPgTransaction } from "../../platform/db/pool-tx";
import { newId } from "../../platform/ids";
import { badRequest, forbidden, notFound } from "../../platform/errors";
import { barrierPolicy } from "../../control/barrier";
import { authorize, assertTeam } from "../../platform/auth/authorize";
import { actorOf, type Principal } from "../../platform/auth/principal";
import { TREE_LOCK_SQL } from "../../platform/db/locks";
import { AUDIT_LOCK_SQL, appendAuditLocked, auditLockKey } from "../audit/audit";
import { CONTROL_CHANNEL, controlPayload } from "../../platform/db/notify";
import { COVERING_BARRIER_SQL } from "./settlements";
import { cancelQueueJobs } from "./queue-jobs";
import { eventInsertSql, eventParams } from "../webhooks/emit";
import { withSpan } from "../../platform/telemetry/tracing";
import { logger } from "../../platform/log";

type QueueJob = { providerName: string; providerJobId: string };

export interface KillResult {
  barrierId: string;
  created: boolean;
}

export interface KillOptions {
  /** Only for the system principal (the barrier engine fanning out a fleet stop): the person who asked
   * for the stop is recorded as the barrier's requester and the audit actor. */
  onBehalfOf?: string;
  /** Called once the dispatch stop has committed (before queued work is cancelled): the bench's mark. */
  onDispatchStopped?: (barrierId: string) => void;
}

export async function killRun(
  p: Principal,
  runId: string,
  reason: string,
  traceparent?: string | null,
  opts: KillOptions = {},
): Promise<KillResult> {
  return withSpan(
    "quiesce.kill",
    { "quiesce.run_id": runId },
    async (span) => {
      const r = await killRunTraced(p, runId, reason, opts);
      span?.setAttributes({ "quiesce.barrier_id": r.barrierId, "quiesce.barrier_created": r.created });
      return r;
    },
    traceparent,
  );
}

async function killRunTraced(p: Principal, runId: string, reason: string, opts: KillOptions): Promise<KillResult> {
  authorize(p, "run.kill");
  const why = typeof reason === "string" ? reason.trim() : "";
  if (!why) throw badRequest("reason: a reason is required");
  if (why.length > 2000) throw badRequest("reason: at most 2000 characters");
  // A run id PostgreSQL cannot hold as text (a NUL byte) names no run.
  if (typeof runId !== "string" || runId.length === 0 || runId.includes("\0")) throw notFound("run");
  const actor = p.type === "system" && opts.onBehalfOf ? opts.onBehalfOf : actorOf(p);

  // On a plain pg connection (lib/platform/db/pool-tx.ts). One round trip opens the transaction, finds the run
  // and takes its tree's lock — only for a run the principal's team owns (another team's run is not
  // found, and its tree is never locked). root_run_id never changes, so it may be read before the lock.
  const result = await withPgTransaction(
    async (q, opened) => {
      const run = opened[0] as { teamId: string; rootRunId: string } | undefined;
      if (!run) throw notFound("run");
      assertTeam(p, run.teamId, "run");
      // Under the lock: the ancestry (is anything above already killed?), the subtree and the run's
      // first lease (the policy's root lease), in one read.
      const rows = await q<{ id: string; lifecycle: string; epoch: number; ancestor: boolean; root_lease: string | null }>(
        `SELECT a.id, a.lifecycle::text AS lifecycle, a.epoch, true AS ancestor,
                CASE WHEN a.id = $1 THEN (SELECT l.id FROM leases l WHERE l.run_id = $1 ORDER BY l.created_at LIMIT 1) END AS root_lease
           FROM runs r JOIN runs a ON a.id = ANY (r.path) WHERE r.id = $1
       UNION ALL
       SELECT c.id, c.lifecycle::text, c.epoch, false, NULL FROM runs c WHERE c.root_run_id = $2 AND $1 = ANY (c.path) AND c.id <> $1`,
        [runId, run.rootRunId],
      );
      const chain = rows.filter((r) => r.ancestor);
      if (chain.some((r) => r.lifecycle === "killed")) {
        // The run is already killed (itself or by an ancestor's barrier): return that barrier.
        const [existing] = await q<{ id: string }>(COVERING_BARRIER_SQL, [runId]);
        if (existing) return { barrierId: existing.id, created: false };
      }
      const self = chain.find((r) => r.id === runId);
      if (!self) throw notFound("run");
      const runIds = [runId, ...rows.filter((r) => !r.ancestor).map((r) => r.id)];
      const barrierId = newId("stop");
      const newEpoch = self.epoch + 1;
      // ONE statement: every write of the dispatch stop sees the same snapshot and commits together, with
      // the run.killed event, the notification (delivered at commit) and the team's audit key (the audit
      // row's predecessor is read next, with a snapshot taken after it).
      // Queued work is cancelled by the second transaction (cancelQueuedWork): its counters start at 0.
      const event = eventParams({
        teamId: run.teamId,
        type: "run.killed",
        runId,
        data: { barrier_id: barrierId, by: actor, reason: why, runs_killed: runIds.length, epoch: newEpoch },
      });
      const [counts] = await q<{ runs: number; leases: number; in_flight: number }>(
        `WITH r AS (
         UPDATE runs SET lifecycle = 'killed', epoch = epoch + 1, lifecycle_changed_at = clock_timestamp(),
                lifecycle_changed_by = $3, lifecycle_reason = $4
          WHERE id = ANY ($1::text[]) RETURNING id),
       l AS (
         UPDATE leases SET revoked_at = clock_timestamp(), revoked_by = $2
          WHERE run_id = ANY ($1::text[]) AND revoked_at IS NULL RETURNING id),
       s AS (
         INSERT INTO settlements (id, barrier_id, operation_id, state_at_barrier, effect_expected)
         SELECT 'set_' || replace(gen_random_uuid()::text, '-', ''), $2, x.id, 'running', 'absence'
           FROM operations x
          WHERE x.run_id = ANY ($1::text[]) AND x.state = 'running'
            -- not already being settled by an earlier barrier of a subtree
            AND NOT EXISTS (SELECT 1 FROM settlements p WHERE p.operation_id = x.id AND p.settled_state IS NULL)
         RETURNING id),
       b AS (
         INSERT INTO barriers (id, team_id, run_id, requested_at, requested_by, reason, new_epoch, policy, phase,
                               runs_killed, leases_revoked, in_flight, dispatch_stopped_at)
         SELECT $2, $6, $5, $8, $3, $4, $7, $9::jsonb, 'revoking',
                (SELECT count(*) FROM r), (SELECT count(*) FROM l), (SELECT count(*) FROM s), clock_timestamp()
         RETURNING runs_killed, leases_revoked, in_flight),
       ev AS (${eventInsertSql(10)} RETURNING 1)
       SELECT b.runs_killed AS runs, b.leases_revoked AS leases, b.in_flight,
              (SELECT count(*) FROM ev)::int AS events,
              pg_notify($15, $16)::text AS notified, pg_advisory_xact_lock(${AUDIT_LOCK_SQL.replace("$1", "$17")})::text AS audit_locked
         FROM b`,
        [
          runIds,
          barrierId,
          actor,
          why,
          runId,
          run.teamId,
          newEpoch,
          new Date(),
          JSON.stringify(barrierPolicy({ rootLeaseId: self.root_lease ?? null, newEpoch })),
          ...event,
          CONTROL_CHANNEL,
          controlPayload({ kind: "kill", teamId: run.teamId, rootRunId: run.rootRunId, runIds, barrierId }),
          auditLockKey(run.teamId),
        ],
      );
      await appendAuditLocked(q, {
        teamId: run.teamId,
        actor,
        action: "run.kill",
        target: runId,
        before: { lifecycle: self.lifecycle, epoch: self.epoch },
        after: {
          lifecycle: "killed",
          epoch: newEpoch,
          barrierId,
          runsKilled: counts?.runs,
          leasesRevoked: counts?.leases,
          inFlight: counts?.in_flight,
          reason: why,
        },
      });
      return { barrierId, created: true };
    },
    {
      begin: (c) =>
        `BEGIN; SELECT team_id AS "teamId", root_run_id AS "rootRunId", pg_advisory_xact_lock(${TREE_LOCK_SQL.replace("$1", "root_run_id")})::text AS locked
           FROM runs WHERE id = ${c.escapeLiteral(runId)}${p.type === "system" ? "" : ` AND team_id = ${c.escapeLiteral(p.teamId)}`}`,
    },
  );
  if (result.created) opts.onDispatchStopped?.(result.barrierId);
  // Also for an existing barrier: a kill repeated while the first one's second step is still running (or
  // after its process died between the two) returns once queued work is cancelled. Dispatch is already
  // stopped: a failure here is logged, not thrown, and the barrier engine's revoking step redoes it.
  await cancelQueuedWork(result.barrierId).catch((err: unknown) =>
    logger("kill").warn({ barrierId: result.barrierId, err }, "queued work not cancelled yet; the barrier engine will"),
  );
  return result;
}

/**
 * The barrier's second step: every queued / scheduled operation of its subtree → cancelled_not_started,
 * then the jobs of real queues cancelled there. Idempotent (done once per barrier: queued_cancelled_at)
 * and serialized per barrier, so the kill's caller and the barrier engine may both run it. Throws when
 * the database write fails: the engine must not settle a barrier whose queued work is not cancelled.
 */
export async function cancelQueuedWorkOfBarrier(p: Principal, barrierId: string): Promise<number> {
  if (p.type !== "system") throw forbidden("barrier engine steps are for system principals");
  return cancelQueuedWork(barrierId);
}

async function cancelQueuedWork(barrierId: string): Promise<number> {
  const row = await withPgTransaction(
    async (q) => {
      const [c] = await q<{
        team_id: string;
        run_id: string;
        root_run_id: string;
        queued: number;
        scheduled: number;
        retries: number;
        leases: number;
        in_flight: number;
        queue_jobs: QueueJob[] | null;
      }>(
        // state_reason is the gate reason a late dequeue or retry will be denied with: scheduled work
        // and retries carry the old epoch (stale_epoch); queued work of the killed run is `killed`, of a
        // descendant `parent_revoked` (the barrier article's (docs/ideas.md#barriers) evals).
        `WITH b AS (
         SELECT b.id, b.team_id, b.run_id, r.root_run_id FROM barriers b JOIN runs r ON r.id = b.run_id
          WHERE b.id = $1 AND b.queued_cancelled_at IS NULL),
       sub AS (
         SELECT c.id FROM b JOIN runs c ON c.root_run_id = b.root_run_id AND b.run_id = ANY (c.path)),
       o AS (
         UPDATE operations SET state = 'cancelled_not_started', finished_at = clock_timestamp(),
                state_reason = CASE WHEN kind IN ('scheduled', 'retry') THEN 'stale_epoch'
                                    WHEN run_id = (SELECT run_id FROM b) THEN 'killed' ELSE 'parent_revoked' END
          WHERE run_id IN (SELECT id FROM sub) AND state IN ('queued', 'scheduled')
         RETURNING kind, provider_name, provider_job_id),
       u AS (
         UPDATE barriers SET queued_cancelled = (SELECT count(*) FROM o WHERE kind IN ('queued', 'call')),
                scheduled_cancelled = (SELECT count(*) FROM o WHERE kind = 'scheduled'),
                retries_cancelled = (SELECT count(*) FROM o WHERE kind = 'retry'),
                queued_cancelled_at = clock_timestamp()
          WHERE id IN (SELECT id FROM b)
         RETURNING team_id, run_id, queued_cancelled, scheduled_cancelled, retries_cancelled, leases_revoked, in_flight)
       SELECT u.team_id, u.run_id, b.root_run_id, u.queued_cancelled AS queued, u.scheduled_cancelled AS scheduled,
              u.retries_cancelled AS retries, u.leases_revoked AS leases, u.in_flight,
              (SELECT json_agg(json_build_object('providerName', provider_name, 'providerJobId', provider_job_id)) FROM o
                WHERE provider_job_id IS NOT NULL AND (provider_name LIKE 'pg-boss:%' OR provider_name LIKE 'bullmq:%')) AS queue_jobs
         FROM u, b`,
        [barrierId],
      );
      if (!c) return null; // done already (or no such barrier)
      const event = eventParams({
        teamId: c.team_id,
        type: "barrier.dispatch_stopped",
        runId: c.run_id,
        subject: barrierId,
        data: {
          barrier_id: barrierId,
          leases_revoked: c.leases,
          queued_cancelled: c.queued,
          scheduled_cancelled: c.scheduled,
          retries_cancelled: c.retries,
          in_flight: c.in_flight,
        },
      });
      const control = controlPayload({ kind: "barrier", teamId: c.team_id, rootRunId: c.root_run_id, barrierId });
      await q(
        `WITH ev AS (${eventInsertSql(1)} RETURNING 1) SELECT (SELECT count(*) FROM ev)::int AS n, pg_notify($6, $7)::text AS notified`,
        [...event, CONTROL_CHANNEL, control],
      );
      return c;
    },
    // Serialized per barrier: the kill's caller and the engine may both get here.
    { begin: (c) => `BEGIN; SELECT pg_advisory_xact_lock(hashtextextended(${c.escapeLiteral(`queued:${barrierId}`)}, 3))` },
  );
  if (!row) return 0;
  if (row.queue_jobs?.length) {
    // Outbound after commit; failures are retried by the barrier engine's revoking step.
    await cancelQueueJobs(row.queue_jobs).catch(() => {});
  }
  return row.queued + row.scheduled + row.retries;
}
