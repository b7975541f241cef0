// Fleet stop (docs/fleet-stop.md): one durable stop scope per decision, read by the gate inside its
// statement, then one cancellation barrier per matching tree (kill), fanned out by the barrier engine in
// bounded parallel from the durable target rows (so a crash loses nothing and a request does no work
// after it answered), and a fleet receipt once every barrier has its receipt.
//
// Serialization: the scope is written under the team's stop-scope lock held EXCLUSIVELY (every gate
// call holds it shared), so no decision that begins after the commit is `allow`, and every operation a
// decision admitted before it is already visible to the barriers that follow.
import "server-only";
import { prisma, type Tx } from "../../platform/db/prisma";
import { newId } from "../../platform/ids";
import { QuiesceError, badRequest, notFound } from "../../platform/errors";
import { barrierTargets, buildFleetReceipt, filterToJson, runStatus, type StopAction, type StopFilter } from "../../control/fleet";
import type { Harness, Lifecycle } from "../../control/types";
import type { CreateStopBody, StopDryRunResponse, StopFilterInput, StopView } from "../../schemas/stops";
import { authorize, assertTeam } from "../../platform/auth/authorize";
import { actorOf, type Principal } from "../../platform/auth/principal";
import { lockTeamScopesExclusive } from "../../platform/db/locks";
import { appendAudit, appendAuditAtCommit } from "../audit/audit";
import { notifyControl } from "../../platform/db/notify";
import { teamListenKey } from "../../schemas/control-event";
import { fanOut } from "./fan-out";
import { countWorkingRuns } from "../runs/activity";

const SAMPLE = 20;

function teamOf(p: Principal): string {
  if (p.type === "system") throw badRequest("teamId: a fleet stop is always one team's");
  return p.teamId;
}

export function toFilter(f: StopFilterInput): StopFilter {
  const out: StopFilter = {};
  if (f.harness) out.harness = f.harness;
  if (f.agent) out.agent = f.agent;
  if (f.taskPrefix !== undefined) out.taskPrefix = f.taskPrefix;
  if (f.createdAfter) out.createdAfter = Date.parse(f.createdAfter);
  if (f.createdBefore) out.createdBefore = Date.parse(f.createdBefore);
  if (f.status) out.status = f.status;
  if (f.runIds) out.runIds = [...new Set(f.runIds)];
  return out;
}

/** The scope row's matching columns (NULL: no constraint), as quiesce_scope_matches reads them. */
function scopeColumns(f: StopFilter) {
  return {
    f_harness: f.harness ?? null,
    f_agent: f.agent ?? null,
    f_task_prefix: f.taskPrefix ?? null,
    f_created_after: f.createdAfter === undefined ? null : new Date(f.createdAfter).toISOString(),
    f_created_before: f.createdBefore === undefined ? null : new Date(f.createdBefore).toISOString(),
    f_status: f.status ?? null,
    f_run_ids: f.runIds ?? null,
  };
}

interface CoveredRun {
  id: string;
  path: string[];
  task_id: string;
  harness: Harness;
  lifecycle: Lifecycle;
  finished_at: Date | null;
  created_at: Date;
}

/**
 * A run a stop still has to stop (SQL over alias `a`): not killed, and not finished — unless work of it
 * is still queued or running (finishing does not take that work out of a stop, docs/fleet-stop.md).
 */
const STOPPABLE = (a: string) =>
  `${a}.lifecycle <> 'killed' AND (${a}.finished_at IS NULL OR EXISTS (SELECT 1 FROM operations o
     WHERE o.run_id = ${a}.id AND o.state IN ('queued', 'scheduled', 'running')))`;

/**
 * The team's runs a scope covers and that can still be stopped: the run or an ancestor matches (the
 * same SQL function the gate uses), and STOPPABLE holds — killed runs and finished runs with nothing
 * left in progress are not stopped again.
 */
async function coveredRunsTx(tx: Tx, teamId: string, f: StopFilter): Promise<CoveredRun[]> {
  return tx.$queryRawUnsafe<CoveredRun[]>(
    `SELECT r.id, r.path, r.task_id, r.harness::text AS harness, r.lifecycle::text AS lifecycle, r.finished_at, r.created_at
       FROM jsonb_populate_record(NULL::stop_scopes, $2::jsonb) s
       JOIN runs r ON r.team_id = $1 AND ${STOPPABLE("r")}
      WHERE EXISTS (SELECT 1 FROM runs a WHERE a.id = ANY (r.path) AND a.team_id = $1 AND quiesce_scope_matches(s, a))
      ORDER BY r.created_at DESC, r.id`,
    teamId,
    JSON.stringify(scopeColumns(f)),
  );
}

/**
 * The scope's coverage right after it commits, set-based (a fleet of 10 000 runs is one statement, not 10 000 rows
 * through the application): `matched` = the runs coveredRunsTx lists; for a kill, the barrier targets —
 * the covered runs none of whose ancestors is covered (lib/control/fleet.ts barrierTargets, the same
 * rule) — inserted as the scope's target rows. Returns the first 100 targets for the wake-up notification.
 */
async function recordCoverageTx(
  tx: Tx,
  stopId: string,
  teamId: string,
  kill: boolean,
): Promise<{ matched: number; targets: number; first: string[] }> {
  const [row] = await tx.$queryRawUnsafe<{ matched: number; targets: number; first: string[] | null }[]>(
    `WITH s AS (SELECT * FROM stop_scopes WHERE id = $1),
     covered AS (
       SELECT r.id, r.path, r.created_at FROM s JOIN runs r ON r.team_id = $2 AND ${STOPPABLE("r")}
        WHERE EXISTS (SELECT 1 FROM runs a WHERE a.id = ANY (r.path) AND a.team_id = $2 AND quiesce_scope_matches(s, a))),
     targets AS (
       SELECT c.id, c.created_at FROM covered c, s
        WHERE $3 AND NOT EXISTS (
          SELECT 1 FROM runs d
           WHERE d.id = ANY (c.path[1:cardinality(c.path) - 1]) AND d.team_id = $2 AND ${STOPPABLE("d")}
             AND EXISTS (SELECT 1 FROM runs e WHERE e.id = ANY (d.path) AND e.team_id = $2 AND quiesce_scope_matches(s, e)))),
     ins AS (INSERT INTO stop_scope_targets (scope_id, run_id) SELECT $1, id FROM targets RETURNING run_id),
     upd AS (UPDATE stop_scopes SET matched = (SELECT count(*) FROM covered), coverage_at = clock_timestamp() WHERE id = $1 RETURNING matched)
     SELECT (SELECT matched FROM upd) AS matched, (SELECT count(*) FROM ins)::int AS targets,
            (SELECT array_agg(id) FROM (SELECT id FROM targets ORDER BY created_at DESC, id LIMIT 100) f) AS first`,
    stopId,
    teamId,
    kill,
  );
  return { matched: row?.matched ?? 0, targets: row?.targets ?? 0, first: row?.first ?? [] };
}

function validate(body: CreateStopBody): { filter: StopFilter; reason: string } {
  const filter = toFilter(body.filter);
  if (filter.createdAfter !== undefined && filter.createdBefore !== undefined && filter.createdAfter >= filter.createdBefore) {
    throw badRequest("filter.createdBefore: must be later than filter.createdAfter");
  }
  const reason = body.reason.trim();
  if (!reason) throw badRequest("reason: a reason is required");
  return { filter, reason };
}

/** dryRun: what the scope would cover now (count and a sample), nothing written. */
export async function previewStop(p: Principal, body: CreateStopBody): Promise<StopDryRunResponse> {
  authorize(p, "fleet.stop");
  const teamId = teamOf(p);
  const { filter } = validate(body);
  // One statement over every run of the team: at 10 000 matching runs on a loaded machine it can
  // outlast Prisma's default 5 s interactive-transaction budget.
  const covered = await prisma().$transaction((tx) => coveredRunsTx(tx, teamId, filter), { timeout: 60_000, maxWait: 30_000 });
  // A paused run holds every new call, so only the live ones can be working (lib/control/activity.ts).
  const working = await countWorkingRuns(
    p,
    teamId,
    covered.filter((r) => r.lifecycle === "normal" && r.finished_at === null).map((r) => r.id),
  );
  return {
    dryRun: true,
    action: body.action,
    filter: body.filter,
    matched: covered.length,
    barrierTargets: barrierTargets(covered.map((r) => ({ runId: r.id, path: r.path }))).length,
    working,
    sample: covered.slice(0, SAMPLE).map((r) => ({
      runId: r.id,
      taskId: r.task_id,
      harness: r.harness,
      createdAt: r.created_at.toISOString(),
      status: runStatus({ lifecycle: r.lifecycle, finishedAt: r.finished_at?.getTime() ?? null }),
    })),
  };
}

/**
 * Commits the scope — the decision: dispatch stops for every matching run, and for matching runs created
 * later, the moment this short transaction commits (the scope row and its audit row, under the team's
 * stop-scope lock held exclusively) — then records its coverage (matched count; for a kill, the barrier
 * targets) in a transaction of its own, and answers the scope's view. The barriers are fanned out by the
 * barrier engine from the target rows.
 */
export async function createStop(p: Principal, body: CreateStopBody): Promise<StopView> {
  authorize(p, "fleet.stop");
  const teamId = teamOf(p);
  const { filter, reason } = validate(body);
  const actor = actorOf(p);
  const stopId = newId("scope");
  // Short: every gate call of the team waits for this lock while it is held, so nothing here scales with
  // the team's runs. The audit row is appended as COMMIT runs (the audit lock is never held across a round
  // trip to Node); the coverage is not part of the decision and is recorded right after it.
  await prisma().$transaction(
    async (tx) => {
      await lockTeamScopesExclusive(tx, teamId);
      const cols = scopeColumns(filter);
      await tx.$executeRawUnsafe(
        `INSERT INTO stop_scopes (id, team_id, action, filter, f_harness, f_agent, f_task_prefix, f_created_after, f_created_before, f_status, f_run_ids,
                                reason, requested_by, created_at)
       VALUES ($1, $2, $3::"StopAction", $4::jsonb, $5::"Harness"[], $6::text[], $7, $8::timestamptz, $9::timestamptz, $10::text[], $11::text[], $12, $13, clock_timestamp())`,
        stopId,
        teamId,
        body.action,
        JSON.stringify(filterToJson(filter)),
        cols.f_harness,
        cols.f_agent,
        cols.f_task_prefix,
        cols.f_created_after,
        cols.f_created_before,
        cols.f_status,
        cols.f_run_ids,
        reason,
        actor,
      );
      // Wakes every supervisor of the team (`quiesce exec` freezes or empties its tree on a matching scope).
      await notifyControl(tx, { kind: "scope", teamId, rootRunId: teamListenKey(teamId) });
      await appendAuditAtCommit(tx, {
        teamId,
        actor,
        action: `fleet.${body.action}`,
        target: stopId,
        after: { filter: filterToJson(filter) as never, reason },
      });
    },
    { timeout: 30_000, maxWait: 30_000 },
  );
  const targetCount = await recordCoverage(stopId);
  // A kill that matched nothing is complete at once: its (empty) fleet receipt is issued before answering.
  if (body.action === "kill" && targetCount === 0) await issueFleetReceiptIfDue(stopId);
  return getStop(p, stopId);
}

/**
 * The scope's coverage, once: what it covers now (runs created later are the gate's to refuse) and, for a
 * kill, its barrier targets; then the barrier engine is woken. Run by the request right after the scope
 * commits, and by the barrier engine for a scope whose request died in between (the scope row's lock
 * makes the second a no-op). Returns the number of targets (0 when already recorded).
 */
async function recordCoverage(stopId: string): Promise<number> {
  return prisma().$transaction(
    async (tx) => {
      const [s] = await tx.$queryRawUnsafe<{ team_id: string; action: StopAction; coverage_at: Date | null }[]>(
        `SELECT team_id, action::text AS action, coverage_at FROM stop_scopes WHERE id = $1 FOR UPDATE`,
        stopId,
      );
      if (!s || s.coverage_at) return 0;
      const { targets, first } = await recordCoverageTx(tx, stopId, s.team_id, s.action === "kill");
      if (targets > 0) {
        // Wakes the barrier engine, which fans the barriers out from the target rows.
        await notifyControl(tx, { kind: "kill", teamId: s.team_id, rootRunId: first[0]!, runIds: first });
      }
      return targets;
    },
    { timeout: 120_000, maxWait: 30_000 },
  );
}

/**
 * The barrier engine's part (each wake): for the kill scopes with targets not yet started, start their
 * barriers (bounded parallel; each the ordinary kill, on behalf of the person who asked for the stop,
 * audited as such), then issue the fleet receipts that are due. Idempotent; several engines may run it
 * (a kill of a killed tree answers its existing barrier). Returns how many barriers it started.
 */
export async function advancePendingStops(p: Principal, teamId: string | null = null, signal?: AbortSignal): Promise<number> {
  authorize(p, "fleet.stop");
  // A scope whose request died between its commit and its coverage (the request records it within
  // moments; older than this, nobody will): its targets are recorded here, so the fan-out below sees them.
  const uncovered = await prisma().$queryRawUnsafe<{ id: string }[]>(
    `SELECT id FROM stop_scopes WHERE coverage_at IS NULL AND created_at < clock_timestamp() - interval '10 seconds'
        AND ($1::text IS NULL OR team_id = $1) ORDER BY created_at LIMIT 20`,
    teamId,
  );
  for (const u of uncovered) await recordCoverage(u.id);
  const scopes = await prisma().$queryRawUnsafe<{ id: string; team_id: string; reason: string; requested_by: string }[]>(
    `SELECT s.id, s.team_id, s.reason, s.requested_by FROM stop_scopes s
      WHERE s.action = 'kill' AND s.completed_at IS NULL AND ($1::text IS NULL OR s.team_id = $1)
      ORDER BY s.created_at LIMIT 20`,
    teamId,
  );
  let started = 0;
  for (const s of scopes) {
    if (signal?.aborted) break;
    if (fanningOut.has(s.id)) continue;
    fanningOut.add(s.id);
    try {
      started += await fanOut(p, { id: s.id, teamId: s.team_id, reason: s.reason, requestedBy: s.requested_by }, signal);
    } finally {
      fanningOut.delete(s.id);
    }
    await issueFleetReceiptIfDue(s.id);
  }
  return started;
}

const fanningOut = new Set<string>();

/** The fleet receipt, exactly once, when every target has a barrier with a receipt. */
async function issueFleetReceiptIfDue(stopId: string): Promise<boolean> {
  // Cheap check first, without the row lock: called after every barrier receipt of a large fleet.
  const [due] = await prisma().$queryRawUnsafe<{ pending: boolean }[]>(
    `SELECT EXISTS (SELECT 1 FROM stop_scope_targets t WHERE t.scope_id = $1
              AND ((t.barrier_id IS NULL AND t.error IS NULL)
                OR (t.barrier_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM stop_receipts r WHERE r.barrier_id = t.barrier_id))))
            -- no targets recorded yet is not "no targets": the coverage comes after the scope's commit
            OR EXISTS (SELECT 1 FROM stop_scopes s WHERE s.id = $1 AND s.coverage_at IS NULL) AS pending`,
    stopId,
  );
  if (due?.pending) return false;
  return prisma().$transaction(
    async (tx) => {
      await tx.$queryRawUnsafe(`SELECT id FROM stop_scopes WHERE id = $1 FOR UPDATE`, stopId);
      const s = await tx.stopScope.findUniqueOrThrow({ where: { id: stopId } });
      if (s.action !== "kill" || s.completedAt || !s.coverageAt) return false;
      const targets = await tx.stopScopeTarget.findMany({ where: { scopeId: stopId } });
      if (targets.some((t) => t.barrierId === null && t.error === null)) return false;
      const receipts = await latestReceiptsTx(
        tx,
        targets.flatMap((t) => (t.barrierId ? [t.barrierId] : [])),
      );
      if (targets.some((t) => t.barrierId && !receipts.has(t.barrierId))) return false;
      const issuedAt = new Date();
      const r = buildFleetReceipt({
        scopeId: s.id,
        teamId: s.teamId,
        action: s.action,
        filter: fromRow(s.filter),
        reason: s.reason,
        requestedBy: s.requestedBy,
        committedAt: s.createdAt.getTime(),
        issuedAt: issuedAt.getTime(),
        matched: s.matched,
        runs: targets.map((t) => {
          const rc = t.barrierId ? receipts.get(t.barrierId) : undefined;
          // A target whose barrier could not be started is not stopped: the fleet is incomplete.
          return rc && t.barrierId
            ? { runId: t.runId, barrierId: t.barrierId, decision: rc.decision, digest: rc.digest, link: receiptLink(t.barrierId) }
            : { runId: t.runId, barrierId: "", decision: "stop_incomplete" as const, digest: "", link: "" };
        }),
      });
      await tx.stopScope.update({
        where: { id: stopId },
        data: {
          completedAt: issuedAt,
          decision: r.decision,
          receiptCanonical: r.canonical,
          receiptBody: r.body as never,
          receiptDigest: r.digest,
        },
      });
      await appendAudit(tx, {
        teamId: s.teamId,
        actor: "system:fleet-stop",
        action: "fleet.receipt",
        target: stopId,
        after: { decision: r.decision, digest: r.digest, barriers: targets.length },
      });
      return true;
    },
    { timeout: 60_000 },
  );
}

const receiptLink = (barrierId: string) => `/api/v1/barriers/${barrierId}/receipt`;

async function latestReceiptsTx(
  tx: Tx,
  barrierIds: string[],
): Promise<Map<string, { decision: "stopped_and_quiet" | "stop_incomplete"; digest: string }>> {
  if (barrierIds.length === 0) return new Map();
  const rows = await tx.$queryRawUnsafe<{ barrier_id: string; decision: "stopped_and_quiet" | "stop_incomplete"; digest: string }[]>(
    `SELECT DISTINCT ON (barrier_id) barrier_id, decision::text AS decision, digest FROM stop_receipts
      WHERE barrier_id = ANY ($1::text[]) ORDER BY barrier_id, version DESC`,
    barrierIds,
  );
  return new Map(rows.map((r) => [r.barrier_id, { decision: r.decision, digest: r.digest }]));
}

function fromRow(json: unknown): StopFilter {
  const j = (json ?? {}) as StopFilterInput;
  return toFilter(j);
}

/** The barrier engine, after barriers' receipts: each fleet stop waiting on any of them may now be complete (checked once). */
export async function onBarrierReceipts(p: Principal, barrierIds: string[]): Promise<void> {
  authorize(p, "fleet.stop");
  if (barrierIds.length === 0) return;
  const rows = await prisma().$queryRawUnsafe<{ scope_id: string }[]>(
    `SELECT DISTINCT scope_id FROM stop_scope_targets WHERE barrier_id = ANY ($1::text[])`,
    barrierIds,
  );
  for (const r of rows) await issueFleetReceiptIfDue(r.scope_id);
}

/** Progress of a fleet stop (and its fleet receipt once issued): any member of the team may read it. */
export async function getStop(p: Principal, stopId: string): Promise<StopView> {
  authorize(p, "run.read");
  const s = await prisma().stopScope.findUnique({ where: { id: stopId } });
  if (!s) throw notFound("stop");
  assertTeam(p, s.teamId, "stop");
  const targets = await prisma().stopScopeTarget.findMany({ where: { scopeId: stopId }, orderBy: { runId: "asc" } });
  const barrierIds = targets.flatMap((t) => (t.barrierId ? [t.barrierId] : []));
  const barriers = new Map(
    (await prisma().barrier.findMany({ where: { id: { in: barrierIds } }, select: { id: true, phase: true } })).map((b) => [b.id, b.phase]),
  );
  const receipts = await prisma().$transaction((tx) => latestReceiptsTx(tx, barrierIds));
  const [open] =
    barrierIds.length === 0
      ? [{ n: 0n }]
      : await prisma().$queryRawUnsafe<{ n: bigint }[]>(
          `SELECT count(DISTINCT rc.id) AS n FROM reconciliations rc JOIN settlements st ON st.id = rc.settlement_id
      WHERE st.barrier_id = ANY ($1::text[]) AND rc.status <> 'resolved'`,
          barrierIds,
        );
  const runs = targets.map((t) => {
    const rc = t.barrierId ? receipts.get(t.barrierId) : undefined;
    return {
      runId: t.runId,
      barrierId: t.barrierId,
      phase: t.barrierId ? (barriers.get(t.barrierId) ?? null) : null,
      decision: rc?.decision ?? null,
      digest: rc?.digest ?? null,
      link: t.barrierId ? receiptLink(t.barrierId) : null,
      error: t.error,
    };
  });
  return {
    stopId: s.id,
    action: s.action,
    filter: s.filter as StopFilterInput,
    reason: s.reason,
    requestedBy: s.requestedBy,
    createdAt: s.createdAt.toISOString(),
    dispatchStopped: s.liftedAt === null,
    liftedAt: s.liftedAt?.toISOString() ?? null,
    matched: s.matched,
    barriers: {
      total: targets.length,
      started: barrierIds.length,
      complete: runs.filter((r) => r.phase === "complete").length,
      stopIncomplete: runs.filter((r) => r.decision === "stop_incomplete").length,
      failed: runs.filter((r) => r.error !== null).length,
    },
    openReconciliations: Number(open?.n ?? 0),
    runs,
    receipt:
      s.completedAt && s.decision && s.receiptDigest
        ? {
            decision: s.decision,
            digest: s.receiptDigest,
            issuedAt: s.completedAt.toISOString(),
            body: (s.receiptBody ?? {}) as Record<string, unknown>,
          }
        : null,
  };
}

/** Lifts a pause scope: the next gate call of each run is decided afresh. A kill scope is for good. */
export async function resumeStop(p: Principal, stopId: string, reason: string): Promise<StopView> {
  authorize(p, "fleet.stop");
  const why = reason.trim();
  if (!why) throw badRequest("reason: a reason is required");
  const actor = actorOf(p);
  await prisma().$transaction(async (tx) => {
    const found = await tx.stopScope.findUnique({ where: { id: stopId }, select: { teamId: true } });
    if (!found) throw notFound("stop");
    assertTeam(p, found.teamId, "stop");
    await lockTeamScopesExclusive(tx, found.teamId);
    const s = await tx.stopScope.findUniqueOrThrow({ where: { id: stopId }, select: { action: true, liftedAt: true } });
    if (s.action === "kill") throw new QuiesceError("conflict", "a kill scope is for good: it cannot be resumed");
    if (s.liftedAt) return;
    await tx.stopScope.update({ where: { id: stopId }, data: { liftedAt: new Date(), liftedBy: actor, liftReason: why } });
    await notifyControl(tx, { kind: "scope", teamId: found.teamId, rootRunId: teamListenKey(found.teamId) });
    await appendAudit(tx, { teamId: found.teamId, actor, action: "fleet.resume", target: stopId, after: { reason: why } });
  });
  return getStop(p, stopId);
}

/** The team's scopes, newest first (the console's fleet-stop list). */
export async function listStops(
  p: Principal,
  limit = 50,
): Promise<
  { stopId: string; action: StopAction; reason: string; createdAt: string; live: boolean; matched: number; decision: string | null }[]
> {
  authorize(p, "run.read");
  const teamId = teamOf(p);
  const rows = await prisma().stopScope.findMany({
    where: { teamId },
    orderBy: { createdAt: "desc" },
    take: Math.min(Math.max(limit, 1), 200),
  });
  return rows.map((s) => ({
    stopId: s.id,
    action: s.action,
    reason: s.reason,
    createdAt: s.createdAt.toISOString(),
    live: s.liftedAt === null,
    matched: s.matched,
    decision: s.decision,
  }));
}
