// Kill = the cancellation barrier transaction (docs/architecture.md#the-cancellation-barrier,
// docs/architecture.md#barriers `cancellation_barrier`).
//
// Scope decision: the barrier covers the KILLED run's subtree (the run and its descendants, by
// runs.path), not the whole tree from the root. Killing a child stops that child's authority and
// everything it delegated; its parent keeps running. Killing the root covers the whole tree.
// The tree lock is always the ROOT's key (the gate takes it shared for every run of the tree).
//
// In ONE transaction: Barrier row (phase revoking, policy, new epoch) → every run of the subtree
// killed with epoch + 1 → every lease revoked (revoked_by = barrier id) → every queued / scheduled
// operation cancelled_not_started (kept, with the gate reason a late dequeue will get) → one
// Settlement per running operation → counters + ladder timestamps → audit row → NOTIFY. Set-based
// statements only: a tree holding 10 000 queued operations is one UPDATE.
// After commit: jobs in real queues (pg-boss / bullmq) are cancelled (the engine repeats this, so a
// crash between commit and the call loses nothing).
import "server-only";
import { prisma } from "../db/prisma";
import { newId } from "../ids";
import { badRequest, notFound } from "../errors";
import { barrierPolicy } from "../control/barrier";
import { authorize, assertTeam } from "./authorize";
import { actorOf, type Principal } from "./principal";
import { lockRunTreeExclusive } from "./internal/locks";
import { appendAudit } from "./audit";
import { notifyControl } from "./notify";
import { coveringBarrierTx } from "./settlements";
import { cancelQueueJobs } from "../queues/cancel";
import { emitEventTx } from "./internal/events";
import { withSpan } from "../integrations/tracing";

type QueueJob = { providerName: string; providerJobId: string };

export interface KillResult {
  barrierId: string;
  created: boolean;
}

/**
 * `opts.onBehalfOf`: only for the system principal (the barrier engine fanning out a fleet stop): the
 * person who asked for the stop is recorded as the barrier's requester and the audit actor.
 */
export async function killRun(
  p: Principal,
  runId: string,
  reason: string,
  traceparent?: string | null,
  opts: { onBehalfOf?: string } = {},
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

async function killRunTraced(p: Principal, runId: string, reason: string, opts: { onBehalfOf?: string }): Promise<KillResult> {
  authorize(p, "run.kill");
  const why = typeof reason === "string" ? reason.trim() : "";
  if (!why) throw badRequest("reason: a reason is required");
  if (why.length > 2000) throw badRequest("reason: at most 2000 characters");
  const run = await prisma().run.findUnique({ where: { id: runId }, select: { id: true, teamId: true, rootRunId: true } });
  if (!run) throw notFound("run");
  assertTeam(p, run.teamId, "run");
  const actor = p.type === "system" && opts.onBehalfOf ? opts.onBehalfOf : actorOf(p);

  const result = await prisma().$transaction(
    async (tx) => {
      await lockRunTreeExclusive(tx, run.rootRunId);
      // Under the lock: the ancestry (is anything above already killed?) and the subtree, in one read.
      const rows = await tx.$queryRawUnsafe<{ id: string; lifecycle: string; epoch: number; ancestor: boolean }[]>(
        `SELECT a.id, a.lifecycle::text AS lifecycle, a.epoch, true AS ancestor FROM runs r JOIN runs a ON a.id = ANY (r.path) WHERE r.id = $1
       UNION ALL
       SELECT c.id, c.lifecycle::text, c.epoch, false FROM runs c WHERE c.root_run_id = $2 AND $1 = ANY (c.path) AND c.id <> $1`,
        runId,
        run.rootRunId,
      );
      const chain = rows.filter((r) => r.ancestor);
      if (chain.some((r) => r.lifecycle === "killed")) {
        // The run is already killed (itself or by an ancestor's barrier): return that barrier.
        const existing = await coveringBarrierTx(tx, runId);
        if (existing) return { barrierId: existing.id, created: false, queueJobs: [] as QueueJob[] };
      }
      const self = chain.find((r) => r.id === runId);
      if (!self) throw notFound("run");
      const runIds = [runId, ...rows.filter((r) => !r.ancestor).map((r) => r.id)];
      const barrierId = newId("stop");
      const newEpoch = self.epoch + 1;
      const rootLease = await tx.lease.findFirst({ where: { runId }, orderBy: { createdAt: "asc" }, select: { id: true } });
      // ONE statement: every write of the barrier sees the same snapshot and commits together.
      // Cancelled work keeps its row; state_reason is the gate reason a late dequeue or retry will be
      // denied with: scheduled work and retries carry the old epoch (stale_epoch); queued work of the
      // killed run is `killed`, of a descendant `parent_revoked` (the barrier article's (docs/architecture.md#barriers) evals).
      const [counts] = await tx.$queryRawUnsafe<
        {
          runs: number;
          leases: number;
          queued: number;
          scheduled: number;
          retries: number;
          in_flight: number;
          queue_jobs: QueueJob[] | null;
        }[]
      >(
        `WITH r AS (
         UPDATE runs SET lifecycle = 'killed', epoch = epoch + 1, lifecycle_changed_at = clock_timestamp(),
                lifecycle_changed_by = $3, lifecycle_reason = $4
          WHERE id = ANY ($1::text[]) RETURNING id),
       l AS (
         UPDATE leases SET revoked_at = clock_timestamp(), revoked_by = $2
          WHERE run_id = ANY ($1::text[]) AND revoked_at IS NULL RETURNING id),
       o AS (
         UPDATE operations SET state = 'cancelled_not_started', finished_at = clock_timestamp(),
                state_reason = CASE WHEN kind IN ('scheduled', 'retry') THEN 'stale_epoch'
                                    WHEN run_id = $5 THEN 'killed' ELSE 'parent_revoked' END
          WHERE run_id = ANY ($1::text[]) AND state IN ('queued', 'scheduled')
         RETURNING kind, provider_name, provider_job_id),
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
                               runs_killed, leases_revoked, queued_cancelled, scheduled_cancelled, retries_cancelled, in_flight,
                               dispatch_stopped_at, queued_cancelled_at)
         SELECT $2, $6, $5, $8, $3, $4, $7, $9::jsonb, 'revoking',
                (SELECT count(*) FROM r), (SELECT count(*) FROM l),
                (SELECT count(*) FROM o WHERE kind IN ('queued', 'call')), (SELECT count(*) FROM o WHERE kind = 'scheduled'),
                (SELECT count(*) FROM o WHERE kind = 'retry'), (SELECT count(*) FROM s),
                clock_timestamp(), clock_timestamp()
         RETURNING runs_killed, leases_revoked, queued_cancelled, scheduled_cancelled, retries_cancelled, in_flight)
       SELECT b.runs_killed AS runs, b.leases_revoked AS leases, b.queued_cancelled AS queued, b.scheduled_cancelled AS scheduled,
              b.retries_cancelled AS retries, b.in_flight,
              (SELECT json_agg(json_build_object('providerName', provider_name, 'providerJobId', provider_job_id)) FROM o
                WHERE provider_job_id IS NOT NULL AND (provider_name LIKE 'pg-boss:%' OR provider_name LIKE 'bullmq:%')) AS queue_jobs
         FROM b`,
        runIds,
        barrierId,
        actor,
        why,
        runId,
        run.teamId,
        newEpoch,
        new Date(),
        JSON.stringify(barrierPolicy({ rootLeaseId: rootLease?.id ?? null, newEpoch })),
      );
      // The kill transaction also stops dispatch (every lease revoked, queued work cancelled): both events commit with it.
      await emitEventTx(tx, {
        teamId: run.teamId,
        type: "run.killed",
        runId,
        data: { barrier_id: barrierId, by: actor, reason: why, runs_killed: counts?.runs ?? 0, epoch: newEpoch },
      });
      await emitEventTx(tx, {
        teamId: run.teamId,
        type: "barrier.dispatch_stopped",
        runId,
        subject: barrierId,
        data: {
          barrier_id: barrierId,
          leases_revoked: counts?.leases ?? 0,
          queued_cancelled: counts?.queued ?? 0,
          in_flight: counts?.in_flight ?? 0,
        },
      });
      await notifyControl(tx, { kind: "kill", teamId: run.teamId, rootRunId: run.rootRunId, runIds, barrierId });
      // Last: the audit append holds the team's audit lock until commit (every kill and receipt of the team waits on it).
      await appendAudit(tx, {
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
      return { barrierId, created: true, queueJobs: counts?.queue_jobs ?? [] };
    },
    { timeout: 120_000, maxWait: 30_000 },
  );

  if (result.queueJobs.length) {
    // Outbound after commit; failures are retried by the barrier engine's revoking step.
    await cancelQueueJobs(result.queueJobs).catch(() => {});
  }
  return { barrierId: result.barrierId, created: result.created };
}
