// Kill = the cancellation barrier (docs/architecture.md#the-cancellation-barrier,
// docs/ideas.md#barriers `cancellation_barrier`). One form for one run and for many (a fleet stop's batch,
// docs/fleet-stop.md#at-scale): a single kill is a list of one.
//
// Scope decision: the barrier covers the KILLED run's subtree (the run and its descendants, by
// runs.path), not the whole tree from the root. Killing a child stops that child's authority and
// everything it delegated; its parent keeps running. Killing the root covers the whole tree.
// The tree lock is always the ROOT's key (the gate takes it shared for every run of the tree).
//
// Two transactions, in this order (docs/barrier-and-receipts.md#kill-the-barrier-transaction):
//
// 1. Dispatch stop, under every target tree's lock (exclusive, in sorted order, so two kills never wait on
//    each other in a cycle): per target a Barrier row (phase revoking, policy, new epoch) → every run of
//    its subtree killed with epoch + 1 → every lease revoked (revoked_by = barrier id) → one Settlement
//    per running operation → the run.killed events and notifications (and a fleet stop's target rows
//    linked) in the same statement → the run.kill audit rows last, under one turn of the team's audit
//    lock. When it commits, every gate, admit and heartbeat under the subtrees is denied (killed /
//    parent_revoked): queued work can no longer start, whatever its row still says. This is "dispatch
//    stopped" (barriers.dispatch_stopped_at).
// 2. Queued work cancelled, right after, without the tree locks (siblings of a killed child keep being
//    decided meanwhile): cancelQueuedWork below. A tree holding 10 000 queued operations is one UPDATE —
//    the expensive one, which is why it is not inside (1).
//
// killTargets returns after both. (2) is idempotent and serialized per barrier: the barrier engine's
// revoking step runs it too (and must finish it before settling), so a crash between (1) and (2)
// loses nothing; a gate call that meets a still-queued operation in between denies it (state denied).
import "server-only";
import { newId } from "../../platform/ids";
import { badRequest, forbidden, notFound } from "../../platform/errors";
import { barrierPolicy } from "../../control/barrier";
import { authorize, assertTeam } from "../../platform/auth/authorize";
import { actorOf, type Principal } from "../../platform/auth/principal";
import { treeLockKey } from "../../platform/db/locks";
import { sql, transaction, type Sql, type SqlClient } from "../../platform/db/sql";
import { appendAuditsSql } from "../audit/audit";
import { CONTROL_CHANNEL, controlPayload } from "../../platform/db/notify";
import { cancelQueueJobs, isQueueProviderSql, type QueueJobRef } from "./queue-jobs";
import { eventsInsertSql } from "../webhooks/emit";
import { withSpan } from "../../platform/telemetry/tracing";
import { logger } from "../../platform/log";

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

export interface KillTargetsOptions extends KillOptions {
  reason: string;
  /** Only for the system principal: the team whose runs these are (a person's kill is always their team's). */
  teamId?: string;
  /** Only for the system principal: the fleet stop whose target rows are linked to their barriers in (1). */
  scopeId?: string;
}

export interface KillTargetsResult {
  /** Barriers this kill created, by target run. */
  started: Map<string, string>;
  /** Targets already covered by a barrier (killed before, or under another target of this kill): its id. */
  existing: Map<string, string>;
  /** Targets that name no run (of the team). */
  notFound: string[];
}

/** One run: the API's, the console's and pause reclaim's kill. Another team's run is not found. */
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
      const r = await killTargets(p, [runId], { ...opts, reason });
      if (r.notFound.length > 0) throw notFound("run");
      const started = r.started.get(runId);
      const result = { barrierId: started ?? r.existing.get(runId)!, created: started !== undefined };
      span?.setAttributes({ "quiesce.barrier_id": result.barrierId, "quiesce.barrier_created": result.created });
      return result;
    },
    traceparent,
  );
}

interface TargetRow {
  id: string;
  team_id: string;
  root_run_id: string;
  path: string[];
  lifecycle: string;
  epoch: number;
  killed_above: boolean;
  covering: string | null;
  root_lease: string | null;
  subtree: string[];
}

const textArray = (ids: readonly string[]): Sql => sql`ARRAY[${sql.join(ids.map((id) => sql`${id}`))}]::text[]`;

/**
 * Kills `runIds` (each with its own barrier, covering its subtree) in one dispatch-stop transaction, then
 * cancels their queued work. Throws when the transaction fails (nothing of it is written).
 */
export async function killTargets(p: Principal, runIds: string[], o: KillTargetsOptions): Promise<KillTargetsResult> {
  authorize(p, "run.kill");
  const why = typeof o.reason === "string" ? o.reason.trim() : "";
  if (!why) throw badRequest("reason: a reason is required");
  if (why.length > 2000) throw badRequest("reason: at most 2000 characters");
  if (p.type !== "system" && (o.scopeId || o.teamId)) throw forbidden("a fleet stop's kill is started by the barrier engine");
  const actor = p.type === "system" && o.onBehalfOf ? o.onBehalfOf : actorOf(p);
  const teamId = p.type === "system" ? (o.teamId ?? null) : p.teamId;
  const out: KillTargetsResult = { started: new Map(), existing: new Map(), notFound: [] };
  // A run id PostgreSQL cannot hold as text (a NUL byte) names no run.
  const ids = [...new Set(runIds)].filter((id) => {
    const ok = typeof id === "string" && id.length > 0 && !id.includes("\0");
    if (!ok) out.notFound.push(id);
    return ok;
  });
  if (ids.length === 0) return out;

  const fresh = await transaction(
    async (tx, opened) => {
      const rows = opened as unknown as TargetRow[];
      const teams = new Set(rows.map((r) => r.team_id));
      if (teams.size > 1) throw badRequest("runIds: one team's runs at a time");
      for (const t of teams) assertTeam(p, t, "run");
      const found = new Map(rows.map((r) => [r.id, r]));
      const inCall = new Set(ids);
      const fresh: (TargetRow & { barrierId: string })[] = [];
      const nested: TargetRow[] = [];
      for (const id of ids) {
        const r = found.get(id);
        if (!r) out.notFound.push(id);
        // Already killed (itself or by an ancestor's barrier): that barrier.
        else if (r.killed_above && r.covering) out.existing.set(id, r.covering);
        // Under another target of this kill: that target's barrier covers it.
        else if (r.path.some((a) => a !== id && inCall.has(a))) nested.push(r);
        else fresh.push({ ...r, barrierId: newId("stop") });
      }
      const barrierOf = new Map(fresh.map((r) => [r.id, r.barrierId]));
      for (const r of nested) {
        const top = r.path.find((a) => a !== r.id && barrierOf.has(a));
        if (top) out.existing.set(r.id, barrierOf.get(top)!);
        else out.notFound.push(r.id); // not reached: the topmost target of a path is fresh or existing
      }
      const links = o.scopeId ? [...out.existing, ...fresh.map((r) => [r.id, r.barrierId] as const)] : [];
      const linkSql = o.scopeId
        ? sql`UPDATE stop_scope_targets st SET barrier_id = x.b, error = NULL
                FROM unnest(${links.map(([r]) => r)}::text[], ${links.map(([, b]) => b)}::text[]) AS x(r, b)
               WHERE st.scope_id = ${o.scopeId} AND st.run_id = x.r`
        : null;
      if (fresh.length === 0) {
        if (linkSql && links.length > 0) await tx.query(linkSql);
        return fresh;
      }
      const team = fresh[0]!.team_id;
      const counts = await dispatchStop(tx, fresh, { team, actor, why, linkSql });
      // Last: the team's audit lock, once for every target, held only until COMMIT.
      await tx.query(
        appendAuditsSql(
          team,
          fresh.map((r) => {
            const c = counts.get(r.barrierId);
            return {
              actor,
              action: "run.kill",
              target: r.id,
              before: { lifecycle: r.lifecycle, epoch: r.epoch },
              after: {
                lifecycle: "killed",
                epoch: r.epoch + 1,
                barrierId: r.barrierId,
                runsKilled: c?.runs,
                leasesRevoked: c?.leases,
                inFlight: c?.in_flight,
                reason: why,
              },
            };
          }),
        ),
      );
      return fresh;
    },
    // One round trip opens the transaction, takes every target tree's lock (only for runs of the
    // principal's team: another team's run is not found, and its tree is never locked), and reads each
    // target under the locks — its ancestry, first lease (the policy's root lease), covering barrier and
    // subtree. root_run_id never changes, so it may be read before the lock.
    {
      open: sql`SELECT count(pg_advisory_xact_lock(${treeLockKey(sql.raw("x.root_run_id"))}))::int AS n
                  FROM (SELECT DISTINCT root_run_id FROM runs WHERE id = ANY (${textArray(ids)}) ${teamFilter(teamId)} ORDER BY root_run_id) x;
                SELECT t.id, t.team_id, t.root_run_id, t.path, t.lifecycle::text AS lifecycle, t.epoch,
                       EXISTS (SELECT 1 FROM runs a WHERE a.id = ANY (t.path) AND a.lifecycle = 'killed') AS killed_above,
                       (SELECT b.id FROM barriers b WHERE b.run_id = ANY (t.path) ORDER BY b.requested_at DESC LIMIT 1) AS covering,
                       (SELECT l.id FROM leases l WHERE l.run_id = t.id ORDER BY l.created_at LIMIT 1) AS root_lease,
                       ARRAY(SELECT c.id FROM runs c WHERE c.root_run_id = t.root_run_id AND t.id = ANY (c.path) ORDER BY c.depth, c.id) AS subtree
                  FROM runs t WHERE t.id = ANY (${textArray(ids)}) ${teamFilter(teamId, "t.")}`,
    },
  );
  for (const r of fresh) out.started.set(r.id, r.barrierId);
  for (const r of fresh) o.onDispatchStopped?.(r.barrierId);
  // Also for an existing barrier: a kill repeated while the first one's second step is still running (or
  // after its process died between the two) returns once queued work is cancelled. Dispatch is already
  // stopped: a failure here is logged, not thrown, and the barrier engine's revoking step redoes it.
  const barriers = [...new Set([...out.started.values(), ...out.existing.values()])];
  await cancelQueued(barriers).catch((err: unknown) =>
    logger("kill").warn({ barrierIds: barriers, err }, "queued work not cancelled yet; the barrier engine will"),
  );
  return out;
}

const teamFilter = (teamId: string | null, alias = ""): Sql => (teamId === null ? sql`` : sql`AND ${sql.raw(alias)}team_id = ${teamId}`);

/**
 * ONE statement for the dispatch stop of every fresh target: each write sees the same snapshot and commits
 * together, with the run.killed events, the notifications (delivered at commit) and the fleet stop's
 * links. Queued work is cancelled by the second transaction (cancelQueuedWork): its counters start at 0.
 */
async function dispatchStop(
  tx: SqlClient,
  fresh: (TargetRow & { barrierId: string })[],
  w: { team: string; actor: string; why: string; linkSql: Sql | null },
): Promise<Map<string, { runs: number; leases: number; in_flight: number }>> {
  const policies = fresh.map((r) => JSON.stringify(barrierPolicy({ rootLeaseId: r.root_lease ?? null, newEpoch: r.epoch + 1 })));
  const events = eventsInsertSql(
    fresh.map((r) => ({
      teamId: w.team,
      type: "run.killed" as const,
      runId: r.id,
      data: { barrier_id: r.barrierId, by: w.actor, reason: w.why, runs_killed: r.subtree.length, epoch: r.epoch + 1 },
    })),
  );
  const notices = fresh.map((r) =>
    controlPayload({ kind: "kill", teamId: w.team, rootRunId: r.root_run_id, runIds: r.subtree, barrierId: r.barrierId }),
  );
  const rows = await tx.query<{ id: string; runs: number; leases: number; in_flight: number }>(
    sql`WITH t AS (
           SELECT * FROM unnest(${fresh.map((r) => r.id)}::text[], ${fresh.map((r) => r.barrierId)}::text[],
                                ${fresh.map((r) => r.epoch + 1)}::int[], ${policies}::jsonb[]) AS t(run_id, barrier_id, new_epoch, policy)),
         sub AS (
           SELECT t.barrier_id, c.id FROM t JOIN runs tr ON tr.id = t.run_id
             JOIN runs c ON c.root_run_id = tr.root_run_id AND t.run_id = ANY (c.path)),
         r AS (
           UPDATE runs SET lifecycle = 'killed', epoch = runs.epoch + 1, lifecycle_changed_at = clock_timestamp(),
                  lifecycle_changed_by = ${w.actor}, lifecycle_reason = ${w.why}
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
           SELECT t.barrier_id, ${w.team}, t.run_id, ${new Date()}, ${w.actor}, ${w.why}, t.new_epoch, t.policy, 'revoking',
                  (SELECT count(*) FROM r WHERE r.barrier_id = t.barrier_id),
                  (SELECT count(*) FROM l WHERE l.barrier_id = t.barrier_id),
                  (SELECT count(*) FROM s WHERE s.barrier_id = t.barrier_id), clock_timestamp()
             FROM t
           RETURNING id, runs_killed, leases_revoked, in_flight),
         ev AS (${events} RETURNING 1)${
           w.linkSql
             ? sql`,
         linked AS (${w.linkSql} RETURNING 1)`
             : sql``
         }
       SELECT b.id, b.runs_killed AS runs, b.leases_revoked AS leases, b.in_flight, (SELECT count(*) FROM ev)::int AS events,
              (SELECT count(pg_notify(${CONTROL_CHANNEL}, x)) FROM unnest(${notices}::text[]) AS x)::int AS notified
         FROM b`,
  );
  return new Map(rows.map((r) => [r.id, { runs: Number(r.runs), leases: Number(r.leases), in_flight: Number(r.in_flight) }]));
}

/**
 * The barriers' second step: every queued / scheduled operation of each one's subtree →
 * cancelled_not_started, then the jobs of real queues cancelled there. Idempotent (done once per barrier:
 * queued_cancelled_at) and serialized per barrier, so the kill's caller and the barrier engine may both
 * run it. Throws when the database write fails: the engine must not settle a barrier whose queued work
 * is not cancelled. Returns how many operations it cancelled.
 */
export async function cancelQueuedWork(p: Principal, barrierIds: string[]): Promise<number> {
  if (p.type !== "system") throw forbidden("barrier engine steps are for system principals");
  return cancelQueued(barrierIds);
}

interface CancelledRow {
  id: string;
  team_id: string;
  run_id: string;
  root_run_id: string;
  queued: number;
  scheduled: number;
  retries: number;
  leases: number;
  in_flight: number;
  queue_jobs: QueueJobRef[] | null;
}

async function cancelQueued(barrierIds: string[]): Promise<number> {
  const ids = [...new Set(barrierIds)];
  if (ids.length === 0) return 0;
  const rows = await transaction(
    async (tx) => {
      // state_reason is the gate reason a late dequeue or retry will be denied with: scheduled work and
      // retries carry the old epoch (stale_epoch); queued work of the killed run is `killed`, of a
      // descendant `parent_revoked` (the barrier article's (docs/ideas.md#barriers) evals). An operation
      // under two of the barriers (a target killed again under a newly killed ancestor) is the outer one's.
      const rows = await tx.query<CancelledRow>(
        sql`WITH b AS (
           SELECT b.id, b.team_id, b.run_id, r.root_run_id, cardinality(r.path) AS depth FROM barriers b JOIN runs r ON r.id = b.run_id
            WHERE b.id = ANY (${ids}::text[]) AND b.queued_cancelled_at IS NULL),
         sub AS (
           SELECT DISTINCT ON (c.id) b.id AS barrier_id, b.run_id AS target, c.id
             FROM b JOIN runs c ON c.root_run_id = b.root_run_id AND b.run_id = ANY (c.path)
            ORDER BY c.id, b.depth),
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
                  WHERE provider_job_id IS NOT NULL AND ${isQueueProviderSql(sql.raw("provider_name"))}) AS queue_jobs
           FROM u`,
      );
      if (rows.length === 0) return rows; // done already (or no such barrier)
      const events = eventsInsertSql(
        rows.map((c) => ({
          teamId: c.team_id,
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
      const notices = rows.map((c) => controlPayload({ kind: "barrier", teamId: c.team_id, rootRunId: c.root_run_id, barrierId: c.id }));
      await tx.query(
        sql`WITH ev AS (${events} RETURNING 1)
            SELECT (SELECT count(*) FROM ev)::int AS n,
                   (SELECT count(pg_notify(${CONTROL_CHANNEL}, x)) FROM unnest(${notices}::text[]) AS x)::int AS notified`,
      );
      return rows;
    },
    // Serialized per barrier (the kill's caller and the engine may both get here), in one sorted order.
    {
      open: sql`SELECT count(pg_advisory_xact_lock(hashtextextended('queued:' || x, 3)))::int AS n
                  FROM (SELECT unnest(${textArray(ids)}) AS x ORDER BY 1) s`,
    },
  );
  const jobs = rows[0]?.queue_jobs ?? [];
  // Outbound after commit; failures are retried by the barrier engine's revoking step.
  if (jobs.length) await cancelQueueJobs(jobs).catch(() => {});
  return rows.reduce((n, r) => n + r.queued + r.scheduled + r.retries, 0);
}
