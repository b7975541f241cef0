// Durable steps of the barrier engine (docs/architecture.md#the-cancellation-barrier). Callable only by system principals (the
// `barrier-worker` process, the kill transaction's after-commit step). Every step is idempotent and
// re-derivable from the rows, so an engine killed at any point is resumed by another instance once
// its claim expires:
//   claim (UPDATE … WHERE claim expired … FOR UPDATE SKIP LOCKED) → revoking: cancel real queue jobs →
//   settling: cancel request / effect checks / settle each settlement (conditional writes) →
//   quiet: wait out the period → complete: issue the receipt under the barrier row lock, once.
import "server-only";
import { prisma, type Tx } from "../../../platform/db/prisma";
import { forbidden } from "../../../platform/errors";
import type { Principal } from "../../../platform/auth/principal";
import type { ProviderConfig } from "../providers/types";
import { quietPeriodFor, quietUntil } from "../../../control/barrier";
import { supervisedQuietSeconds } from "../../../control/evidence/environment";
import type { ProviderResponse, EffectObservation } from "../../../control/settlement";
import { notifyControl, notifyControlMany, type ControlEvent } from "../../../platform/db/notify";
import { settleTx, type SettleInput } from "../settlements";
import { flushReceiptBatchTx, issueReceiptsTx, lockBarriersTx, newReceiptBatch, type ReceiptBatch } from "../internal/receipts";

function system(p: Principal): void {
  if (p.type !== "system") throw forbidden("barrier engine steps are for system principals");
}

export interface Claimed {
  id: string;
  phase: string;
}

export async function renewClaim(p: Principal, barrierId: string, workerId: string, claimMs: number): Promise<boolean> {
  system(p);
  const n = await prisma().$executeRawUnsafe(
    `UPDATE barriers SET claim_expires_at = clock_timestamp() + make_interval(secs => $3::double precision / 1000)
      WHERE id = $1 AND claimed_by = $2 AND phase <> 'complete'`,
    barrierId,
    workerId,
    claimMs,
  );
  return n === 1;
}

export async function releaseClaim(p: Principal, barrierId: string, workerId: string): Promise<void> {
  system(p);
  await prisma().$executeRawUnsafe(
    `UPDATE barriers SET claimed_by = NULL, claim_expires_at = NULL WHERE id = $1 AND claimed_by = $2`,
    barrierId,
    workerId,
  );
}

/** When the engine must look again without a notification: a quiet period ends or a claim expires. */
export async function nextWakeAt(p: Principal, teamId: string | null = null): Promise<Date | null> {
  system(p);
  const rows = await prisma().$queryRawUnsafe<{ at: Date | null }[]>(
    `SELECT min(CASE WHEN phase = 'quiet' AND (claim_expires_at IS NULL OR claim_expires_at < quiet_until) THEN quiet_until
                     ELSE claim_expires_at END) AS at
       FROM barriers WHERE phase <> 'complete' AND ($1::text IS NULL OR team_id = $1)`,
    teamId,
  );
  return rows[0]?.at ?? null;
}

export interface WorkSettlement {
  id: string;
  operationRowId: string;
  operationId: string;
  runId: string;
  tool: string;
  providerName: string | null;
  providerJobId: string | null;
  cancelRequestedAt: Date | null;
  providerResponse: ProviderResponse | null;
  settledState: string | null;
  attempts: number;
}
export interface BarrierWork {
  id: string;
  teamId: string;
  runId: string;
  phase: string;
  requestedAt: Date;
  quietUntil: Date | null;
  settlements: WorkSettlement[];
  providers: Record<string, ProviderConfig>;
}

export async function loadBarrierWork(p: Principal, barrierId: string): Promise<BarrierWork | null> {
  system(p);
  const b = await prisma().barrier.findUnique({
    where: { id: barrierId },
    include: { settlements: { include: { operation: true }, orderBy: { id: "asc" } } },
  });
  if (!b) return null;
  const names = [...new Set(b.settlements.map((s) => s.operation.providerName).filter((n): n is string => !!n))];
  const rows = names.length ? await prisma().provider.findMany({ where: { teamId: b.teamId, name: { in: names } } }) : [];
  return {
    id: b.id,
    teamId: b.teamId,
    runId: b.runId,
    phase: b.phase,
    requestedAt: b.requestedAt,
    quietUntil: b.quietUntil,
    settlements: b.settlements.map((s) => ({
      id: s.id,
      operationRowId: s.operation.id,
      operationId: s.operation.operationId,
      runId: s.operation.runId,
      tool: s.operation.tool,
      providerName: s.operation.providerName,
      providerJobId: s.operation.providerJobId,
      cancelRequestedAt: s.cancelRequestedAt,
      providerResponse: s.providerResponse,
      settledState: s.settledState,
      attempts: s.attempts,
    })),
    providers: Object.fromEntries(
      rows.map((r) => [
        r.name,
        {
          name: r.name,
          kind: r.kind,
          cancelUrl: r.cancelUrl,
          statusUrl: r.statusUrl,
          timeoutMs: r.timeoutMs,
          settleDeadlineMs: r.settleDeadlineMs,
          quietPeriodSeconds: r.quietPeriodSeconds,
          rollbackOwner: r.rollbackOwner,
          endpoint: r.endpoint,
        },
      ]),
    ),
  };
}

export async function settlementState(p: Principal, settlementId: string): Promise<string | null> {
  system(p);
  const s = await prisma().settlement.findUnique({ where: { id: settlementId }, select: { settledState: true } });
  return s?.settledState ?? null;
}

/** Records the intent before the call leaves, so a resumed engine counts the deadline from the first request. */
export async function markCancelRequested(p: Principal, settlementId: string): Promise<Date> {
  system(p);
  const rows = await prisma().$queryRawUnsafe<{ at: Date }[]>(
    `UPDATE settlements SET cancel_requested_at = coalesce(cancel_requested_at, clock_timestamp()) WHERE id = $1 RETURNING cancel_requested_at AS at`,
    settlementId,
  );
  return rows[0]!.at;
}

/** One round of talking to the provider: the cancel answer (when one was asked) and the effect check. */
export async function recordRound(
  p: Principal,
  settlementId: string,
  round: {
    cancel?: { response: ProviderResponse; detail: unknown };
    check: { observed: EffectObservation; detail: unknown };
  },
): Promise<void> {
  system(p);
  const err =
    round.check.observed === "unavailable" ? round.check.detail : round.cancel?.response === "unreachable" ? round.cancel.detail : null;
  await prisma().settlement.update({
    where: { id: settlementId },
    data: {
      ...(round.cancel ? { providerResponse: round.cancel.response, providerRespondedAt: new Date() } : {}),
      effectObserved: round.check.observed,
      effectCheckedAt: new Date(),
      effectCheckDetail: (round.check.detail ?? undefined) as never,
      attempts: { increment: 1 },
      lastError: err === null ? null : JSON.stringify(err ?? null).slice(0, 1000),
    },
  });
}

export async function settleBySystem(p: Principal, barrierId: string, input: Omit<SettleInput, "onlyIfPending">): Promise<boolean> {
  system(p);
  return prisma().$transaction(async (tx) => {
    const ok = await settleTx(tx, { ...input, onlyIfPending: true });
    if (!ok) return false;
    // last_settled_at is written when the barrier goes quiet: no per-settlement write on the hot barrier row.
    const b = await tx.barrier.findUniqueOrThrow({
      where: { id: barrierId },
      select: { teamId: true, run: { select: { rootRunId: true } } },
    });
    await notifyControl(tx, { kind: "settlement", teamId: b.teamId, rootRunId: b.run.rootRunId, barrierId });
    return true;
  });
}

export async function enterSettling(p: Principal, barrierId: string, workerId: string): Promise<boolean> {
  system(p);
  return (
    (await prisma().$executeRawUnsafe(
      // queued_cancelled_at: the kill's second step (queued work cancelled) must have committed first.
      `UPDATE barriers SET phase = 'settling' WHERE id = $1 AND phase = 'revoking' AND claimed_by = $2 AND queued_cancelled_at IS NOT NULL`,
      barrierId,
      workerId,
    )) === 1
  );
}

/**
 * All settled → quiet. The completion rule covers the whole subtree: while any operation under the
 * barrier's run is still in flight (even one an earlier barrier of a child is settling), it stays in
 * `settling` ("subtree"). The quiet period is the team's (never 0 unless the team says so) or the
 * longest of the providers touched, whichever is longer.
 */
export async function enterQuiet(
  p: Principal,
  barrierId: string,
  workerId: string,
): Promise<{ quietUntil: Date } | "pending" | "subtree" | "lost"> {
  system(p);
  return prisma().$transaction(async (tx) => (await enterQuietManyTx(tx, [barrierId], workerId)).get(barrierId)!);
}

type QuietOutcome = { quietUntil: Date } | "pending" | "subtree" | "lost";

// A barrier's subtree (the stopped run and its descendants) as an array, for the statements below.
const SUBTREE_SQL = `CROSS JOIN LATERAL (SELECT array_agg(c.id) AS ids FROM runs c WHERE c.root_run_id = r.root_run_id AND r.id = ANY (c.path)) sub`;
// Operations of a barrier's subtree still in flight, whichever barrier of the tree is settling them.
const IN_FLIGHT_SQL = `(SELECT count(*) FROM operations o WHERE o.run_id = ANY (sub.ids) AND o.state IN ('queued', 'scheduled', 'running'))::int`;
// The barrier's own settlements not settled yet.
const PENDING_OWN_SQL = `(SELECT count(*) FROM settlements s WHERE s.barrier_id = b.id AND s.settled_state IS NULL)::int`;

/**
 * enterQuiet for a set of barriers, set-based (docs/fleet-stop.md#at-scale): the rows locked in one
 * statement (oldest first), every barrier's conditions and quiet-period inputs read in one, the quiet
 * ones written in one and notified in one. Per barrier the conditions and values are the one-barrier
 * step's: not settling or not ours → "lost"; an own settlement open → "pending"; anything under the run
 * in flight → "subtree"; else quiet for the longer of the team's period and the providers touched
 * (settled or cancelled before starting), quiesced at the last settlement under the run.
 */
async function enterQuietManyTx(tx: Tx, barrierIds: string[], workerId: string): Promise<Map<string, QuietOutcome>> {
  await lockBarriersTx(tx, barrierIds);
  const rows = await tx.$queryRawUnsafe<
    {
      id: string;
      team_id: string;
      root_run_id: string;
      phase: string;
      claimed_by: string | null;
      dispatch_stopped_at: Date | null;
      last_settled_at: Date | null;
      team_quiet_ms: number;
      pending_own: number;
      in_flight: number;
      providers: { name: string; q: number | null }[];
      last_settled: Date | null;
      late: number;
      supervised_grace_ms: number | null;
    }[]
  >(
    `SELECT b.id, b.team_id, r.root_run_id, b.phase::text AS phase, b.claimed_by, b.dispatch_stopped_at, b.last_settled_at,
            (SELECT max(e.grace_ms) FROM run_environments e WHERE e.run_id = ANY (sub.ids))::int AS supervised_grace_ms,
            t.quiet_period_ms AS team_quiet_ms, ${PENDING_OWN_SQL} AS pending_own, ${IN_FLIGHT_SQL} AS in_flight,
            (SELECT coalesce(jsonb_agg(jsonb_build_object('name', n.name, 'q', p.quiet_period_seconds) ORDER BY n.name), '[]'::jsonb)
               FROM (SELECT DISTINCT o.provider_name AS name FROM operations o
                      WHERE o.provider_name IS NOT NULL AND o.run_id = ANY (sub.ids)
                        AND (o.id IN (SELECT operation_id FROM settlements) OR o.state = 'cancelled_not_started')) n
               LEFT JOIN providers p ON p.team_id = b.team_id AND p.name = n.name) AS providers,
            (SELECT max(st.settled_at) FROM settlements st JOIN operations o ON o.id = st.operation_id WHERE o.run_id = ANY (sub.ids)) AS last_settled,
            (SELECT count(*) FROM gate_decisions g
              WHERE g.team_id = b.team_id AND g.run_id = ANY (sub.ids) AND g.at >= b.requested_at AND g.decision = 'deny')::int AS late
       FROM barriers b JOIN runs r ON r.id = b.run_id JOIN teams t ON t.id = b.team_id ${SUBTREE_SQL}
      WHERE b.id = ANY ($1::text[])`,
    barrierIds,
  );
  const byId = new Map(rows.map((r) => [r.id, r]));
  const now = new Date();
  const out = new Map<string, QuietOutcome>();
  const quiet: Record<string, unknown>[] = [];
  const notices: ControlEvent[] = [];
  for (const id of barrierIds) {
    const b = byId.get(id);
    if (!b) throw new Error(`barrier not found: ${id}`);
    if (b.phase !== "settling" || b.claimed_by !== workerId) out.set(id, "lost");
    else if (b.pending_own > 0) out.set(id, "pending");
    else if (b.in_flight > 0) out.set(id, "subtree");
    else {
      // Supervised runs' reports are waited for too (docs/evidence.md#the-environment).
      const q = quietPeriodFor(
        b.providers.map((p) => ({ name: p.name, quietPeriodSeconds: p.q })),
        Math.max(b.team_quiet_ms / 1000, supervisedQuietSeconds(b.supervised_grace_ms)),
      );
      const until = quietUntil(now, q);
      quiet.push({
        id,
        q,
        until: until.toISOString(),
        quiesced_at: (b.last_settled ?? b.dispatch_stopped_at ?? now).toISOString(),
        last_settled_at: (b.last_settled ?? b.last_settled_at)?.toISOString() ?? null,
        late: b.late,
      });
      notices.push({ kind: "barrier", teamId: b.team_id, rootRunId: b.root_run_id, barrierId: id });
      out.set(id, { quietUntil: until });
    }
  }
  if (quiet.length > 0) {
    await tx.$executeRawUnsafe(
      `UPDATE barriers b SET phase = 'quiet', quiet_period_seconds = u.q, quiet_until = u.until, quiesced_at = u.quiesced_at,
              last_settled_at = u.last_settled_at, late_requests_denied = u.late
         FROM jsonb_to_recordset($1::jsonb) AS u(id text, q double precision, until timestamptz, quiesced_at timestamptz,
              last_settled_at timestamptz, late int)
        WHERE b.id = u.id`,
      JSON.stringify(quiet),
    );
    await notifyControlMany(tx, notices);
  }
  return out;
}

/** Quiet period over → the receipt. Exactly once per quiet period, under the barrier row lock. */
export async function completeBarrier(
  p: Principal,
  barrierId: string,
  workerId: string,
): Promise<{ version: number; decision: string } | "waiting" | "pending" | "lost"> {
  system(p);
  return prisma().$transaction(async (tx) => (await completeManyTx(tx, [barrierId], workerId)).get(barrierId)!, { timeout: 30_000 });
}

type CompleteOutcome = { version: number; decision: string } | "waiting" | "pending" | "lost";

/**
 * completeBarrier for a set of barriers, set-based (docs/fleet-stop.md#at-scale): the rows locked in one
 * statement (oldest first), the conditions read in one — not quiet or not ours → "lost"; the period not
 * over → "waiting"; anything under the run in flight again → back to settling, "pending" — and the due
 * receipts issued together (issueReceiptsTx), their audit rows into `batch` when given.
 */
async function completeManyTx(tx: Tx, barrierIds: string[], workerId: string, batch?: ReceiptBatch): Promise<Map<string, CompleteOutcome>> {
  await lockBarriersTx(tx, barrierIds);
  const rows = await tx.$queryRawUnsafe<
    { id: string; phase: string; claimed_by: string | null; quiet_until: Date | null; pending_own: number; in_flight: number }[]
  >(
    `SELECT b.id, b.phase::text AS phase, b.claimed_by, b.quiet_until, ${PENDING_OWN_SQL} AS pending_own, ${IN_FLIGHT_SQL} AS in_flight
       FROM barriers b JOIN runs r ON r.id = b.run_id ${SUBTREE_SQL}
      WHERE b.id = ANY ($1::text[])`,
    barrierIds,
  );
  const byId = new Map(rows.map((r) => [r.id, r]));
  const nowMs = Date.now();
  const out = new Map<string, CompleteOutcome>();
  const due: string[] = [];
  const back: string[] = [];
  for (const id of barrierIds) {
    const b = byId.get(id);
    if (!b) throw new Error(`barrier not found: ${id}`);
    if (b.phase !== "quiet" || b.claimed_by !== workerId) out.set(id, "lost");
    else if (b.quiet_until && b.quiet_until.getTime() > nowMs) out.set(id, "waiting");
    else if (b.pending_own > 0 || b.in_flight > 0) {
      back.push(id);
      out.set(id, "pending");
    } else due.push(id);
  }
  if (back.length > 0) await tx.$executeRawUnsafe(`UPDATE barriers SET phase = 'settling' WHERE id = ANY ($1::text[])`, back);
  const issued = await issueReceiptsTx(tx, due, new Date(), "system:barrier-engine", batch);
  for (const [id, r] of issued) out.set(id, r);
  // In the order asked for.
  return new Map(barrierIds.map((id) => [id, out.get(id)!]));
}

// ── Batches (docs/fleet-stop.md#at-scale): a fleet stop puts thousands of barriers in front of the
// engine at once, most with nothing in flight. The engine claims them together and takes each step for
// the whole batch in one transaction — the same per-barrier step functions, under the same row locks and
// conditions, so a batch decides exactly what the barriers one by one would — with one commit per step
// and, for the receipts, one acquisition of the team's audit lock (the rows appended last, together).

/** Up to `limit` claimable barriers at once (oldest first), claimed for this worker. */
export async function claimBarriers(
  p: Principal,
  workerId: string,
  claimMs: number,
  exclude: string[],
  teamId: string | null,
  limit: number,
): Promise<Claimed[]> {
  system(p);
  return prisma().$queryRawUnsafe<Claimed[]>(
    `UPDATE barriers b SET claimed_by = $1, claim_expires_at = clock_timestamp() + make_interval(secs => $2::double precision / 1000)
      WHERE b.id IN (
        SELECT id FROM barriers
         WHERE phase <> 'complete'
           AND (claim_expires_at IS NULL OR claim_expires_at < clock_timestamp())
           AND NOT (phase = 'quiet' AND quiet_until > clock_timestamp())
           AND NOT (id = ANY ($3::text[]))
           AND ($4::text IS NULL OR team_id = $4)
         ORDER BY requested_at
         LIMIT $5
         FOR UPDATE SKIP LOCKED)
      RETURNING b.id, b.phase::text AS phase`,
    workerId,
    claimMs,
    exclude,
    teamId,
    limit,
  );
}

/**
 * Renews the claims of a batch. The batch's own step transaction holds some of these rows locked (FOR
 * UPDATE) until it commits: those are skipped, not waited for — a renewal waiting on them held a pooled
 * connection for the whole step, one more every renewal period, until the pool ran dry (seen in
 * pg_stat_activity during a 10 000-run fleet stop). A row skipped here is either being worked on by this
 * engine right now or was taken by another; every step is conditional on the claim either way.
 */
export async function renewClaims(p: Principal, barrierIds: string[], workerId: string, claimMs: number): Promise<string[]> {
  system(p);
  const rows = await prisma().$queryRawUnsafe<{ id: string }[]>(
    `UPDATE barriers SET claim_expires_at = clock_timestamp() + make_interval(secs => $3::double precision / 1000)
      WHERE id IN (SELECT id FROM barriers WHERE id = ANY ($1::text[]) AND claimed_by = $2 AND phase <> 'complete' FOR UPDATE SKIP LOCKED)
      RETURNING id`,
    barrierIds,
    workerId,
    claimMs,
  );
  return rows.map((r) => r.id);
}

export async function releaseClaims(p: Principal, barrierIds: string[], workerId: string): Promise<void> {
  system(p);
  if (barrierIds.length === 0) return;
  await prisma().$executeRawUnsafe(
    `UPDATE barriers SET claimed_by = NULL, claim_expires_at = NULL WHERE id = ANY ($1::text[]) AND claimed_by = $2`,
    barrierIds,
    workerId,
  );
}

export interface BatchState {
  id: string;
  phase: string;
  rootRunId: string;
  quietUntil: Date | null;
  /** Own settlements not settled yet (work for the provider conversation, one barrier at a time). */
  pending: number;
}

/** The claimed barriers' state, one statement. */
export async function loadBatchState(p: Principal, barrierIds: string[], workerId: string): Promise<BatchState[]> {
  system(p);
  const rows = await prisma().$queryRawUnsafe<
    { id: string; phase: string; root_run_id: string; quiet_until: Date | null; pending: number }[]
  >(
    `SELECT b.id, b.phase::text AS phase, r.root_run_id, b.quiet_until,
            ${PENDING_OWN_SQL} AS pending
       FROM barriers b JOIN runs r ON r.id = b.run_id
      WHERE b.id = ANY ($1::text[]) AND b.claimed_by = $2 AND b.phase <> 'complete'`,
    barrierIds,
    workerId,
  );
  return rows.map((r) => ({ id: r.id, phase: r.phase, rootRunId: r.root_run_id, quietUntil: r.quiet_until, pending: r.pending }));
}

/** enterSettling for many: the ones moved (queued work cancelled, still claimed by us). */
export async function enterSettlingMany(p: Principal, barrierIds: string[], workerId: string): Promise<string[]> {
  system(p);
  const rows = await prisma().$queryRawUnsafe<{ id: string }[]>(
    `UPDATE barriers SET phase = 'settling'
      WHERE id = ANY ($1::text[]) AND phase = 'revoking' AND claimed_by = $2 AND queued_cancelled_at IS NOT NULL RETURNING id`,
    barrierIds,
    workerId,
  );
  return rows.map((r) => r.id);
}

/** enterQuiet for many, in one transaction (oldest first, the order every barrier-row locker uses). */
export async function enterQuietMany(p: Principal, barrierIds: string[], workerId: string): Promise<Map<string, QuietOutcome>> {
  system(p);
  return prisma().$transaction((tx) => enterQuietManyTx(tx, barrierIds, workerId), { timeout: 120_000 });
}

/** completeBarrier for many, in one transaction: every receipt's audit row appended at the end, together. */
export async function completeMany(p: Principal, barrierIds: string[], workerId: string): Promise<Map<string, CompleteOutcome>> {
  system(p);
  return prisma().$transaction(
    async (tx) => {
      const batch = newReceiptBatch();
      const out = await completeManyTx(tx, barrierIds, workerId, batch);
      await flushReceiptBatchTx(tx, batch);
      return out;
    },
    { timeout: 120_000 },
  );
}

/** Jobs in real queues of many barriers' subtrees (queueJobsOfBarrier, one statement). */
export async function queueJobsOfBarriers(p: Principal, barrierIds: string[]): Promise<{ providerName: string; providerJobId: string }[]> {
  system(p);
  return prisma().$queryRawUnsafe<{ providerName: string; providerJobId: string }[]>(
    `SELECT DISTINCT o.provider_name AS "providerName", o.provider_job_id AS "providerJobId"
       FROM barriers b JOIN runs r ON r.id = b.run_id
       JOIN runs c ON c.root_run_id = r.root_run_id AND b.run_id = ANY (c.path)
       JOIN operations o ON o.run_id = c.id
      WHERE b.id = ANY ($1::text[]) AND o.state = 'cancelled_not_started' AND o.provider_job_id IS NOT NULL
        AND (o.provider_name LIKE 'pg-boss:%' OR o.provider_name LIKE 'bullmq:%')`,
    barrierIds,
  );
}

/** Jobs in real queues (pg-boss / bullmq) whose operations this barrier's subtree cancelled. */
export async function queueJobsOfBarrier(p: Principal, barrierId: string): Promise<{ providerName: string; providerJobId: string }[]> {
  system(p);
  return prisma().$queryRawUnsafe<{ providerName: string; providerJobId: string }[]>(
    `SELECT o.provider_name AS "providerName", o.provider_job_id AS "providerJobId"
       FROM barriers b JOIN runs r ON r.id = b.run_id
       JOIN runs c ON c.root_run_id = r.root_run_id AND b.run_id = ANY (c.path)
       JOIN operations o ON o.run_id = c.id
      WHERE b.id = $1 AND o.state = 'cancelled_not_started' AND o.provider_job_id IS NOT NULL
        AND (o.provider_name LIKE 'pg-boss:%' OR o.provider_name LIKE 'bullmq:%')`,
    barrierId,
  );
}
