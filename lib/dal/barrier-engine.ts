// Durable steps of the barrier engine (docs/architecture.md#the-cancellation-barrier). Callable only by system principals (the
// `barrier-worker` process, the kill transaction's after-commit step). Every step is idempotent and
// re-derivable from the rows, so an engine killed at any point is resumed by another instance once
// its claim expires:
//   claim (UPDATE … WHERE claim expired … FOR UPDATE SKIP LOCKED) → revoking: cancel real queue jobs →
//   settling: cancel request / effect checks / settle each settlement (conditional writes) →
//   quiet: wait out the period → complete: issue the receipt under the barrier row lock, once.
import "server-only";
import { prisma, type Tx } from "../db/prisma";
import { forbidden } from "../errors";
import type { Principal } from "./principal";
import type { ProviderConfig } from "../providers/types";
import { quietPeriodFor, quietUntil } from "../control/barrier";
import type { ProviderResponse, EffectObservation } from "../control/settlement";
import { notifyControl } from "./internal/notify";
import { settleTx, type SettleInput } from "./internal/settlements";
import { flushReceiptBatchTx, issueReceiptTx, lockBarrierTx, newReceiptBatch, type ReceiptBatch } from "./internal/receipts";
import { countLateRequestsTx, subtreeRunsTx } from "./internal/evidence";

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

/** Operations of the barrier's subtree still in flight, whichever barrier of the tree is settling them. */
async function subtreeInFlightTx(tx: Parameters<typeof settleTx>[0], barrierId: string, runIds: string[]): Promise<number> {
  const own = await tx.settlement.count({ where: { barrierId, settledState: null } });
  if (own > 0) return own;
  return tx.operation.count({ where: { runId: { in: runIds }, state: { in: ["queued", "scheduled", "running"] } } });
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
  return prisma().$transaction((tx) => enterQuietTx(tx, barrierId, workerId));
}

type QuietOutcome = { quietUntil: Date } | "pending" | "subtree" | "lost";

async function enterQuietTx(tx: Tx, barrierId: string, workerId: string): Promise<QuietOutcome> {
  await lockBarrierTx(tx, barrierId);
  const b = await tx.barrier.findUniqueOrThrow({ where: { id: barrierId } });
  if (b.phase !== "settling" || b.claimedBy !== workerId) return "lost" as const;
  const pendingOwn = await tx.settlement.count({ where: { barrierId, settledState: null } });
  if (pendingOwn > 0) return "pending" as const;
  const runIds = (await subtreeRunsTx(tx, b.runId)).map((r) => r.id);
  if ((await subtreeInFlightTx(tx, barrierId, runIds)) > 0) return "subtree" as const;
  const names = (
    await tx.$queryRawUnsafe<{ name: string }[]>(
      `SELECT DISTINCT o.provider_name AS name FROM operations o
      WHERE o.provider_name IS NOT NULL AND o.run_id = ANY ($1::text[])
        AND (o.id IN (SELECT operation_id FROM settlements) OR o.state = 'cancelled_not_started')`,
      runIds,
    )
  ).map((r) => r.name);
  const rows = names.length
    ? await tx.provider.findMany({ where: { teamId: b.teamId, name: { in: names } }, select: { name: true, quietPeriodSeconds: true } })
    : [];
  const q = quietPeriodFor(
    names.map((n) => ({ name: n, quietPeriodSeconds: rows.find((r) => r.name === n)?.quietPeriodSeconds ?? null })),
    (await tx.team.findUniqueOrThrow({ where: { id: b.teamId }, select: { quietPeriodMs: true } })).quietPeriodMs / 1000,
  );
  const last = await tx.settlement.aggregate({ where: { operation: { runId: { in: runIds } } }, _max: { settledAt: true } });
  const now = new Date();
  const until = quietUntil(now, q);
  await tx.barrier.update({
    where: { id: barrierId },
    data: {
      phase: "quiet",
      quietPeriodSeconds: q,
      quietUntil: until,
      quiescedAt: last._max.settledAt ?? b.dispatchStoppedAt ?? now,
      lastSettledAt: last._max.settledAt ?? b.lastSettledAt,
      lateRequestsDenied: await countLateRequestsTx(tx, b.teamId, runIds, b.requestedAt),
    },
  });
  const root = await tx.run.findUniqueOrThrow({ where: { id: b.runId }, select: { rootRunId: true } });
  await notifyControl(tx, { kind: "barrier", teamId: b.teamId, rootRunId: root.rootRunId, barrierId });
  return { quietUntil: until };
}

/** Quiet period over → the receipt. Exactly once per quiet period, under the barrier row lock. */
export async function completeBarrier(
  p: Principal,
  barrierId: string,
  workerId: string,
): Promise<{ version: number; decision: string } | "waiting" | "pending" | "lost"> {
  system(p);
  return prisma().$transaction((tx) => completeBarrierTx(tx, barrierId, workerId), { timeout: 30_000 });
}

type CompleteOutcome = { version: number; decision: string } | "waiting" | "pending" | "lost";

async function completeBarrierTx(tx: Tx, barrierId: string, workerId: string, batch?: ReceiptBatch): Promise<CompleteOutcome> {
  await lockBarrierTx(tx, barrierId);
  const b = await tx.barrier.findUniqueOrThrow({
    where: { id: barrierId },
    select: { phase: true, claimedBy: true, quietUntil: true, runId: true },
  });
  if (b.phase !== "quiet" || b.claimedBy !== workerId) return "lost" as const;
  if (b.quietUntil && b.quietUntil.getTime() > Date.now()) return "waiting" as const;
  const runIds = (await subtreeRunsTx(tx, b.runId)).map((r) => r.id);
  if ((await subtreeInFlightTx(tx, barrierId, runIds)) > 0) {
    await tx.barrier.update({ where: { id: barrierId }, data: { phase: "settling" } });
    return "pending" as const;
  }
  return issueReceiptTx(tx, barrierId, new Date(), "system:barrier-engine", batch);
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
            (SELECT count(*) FROM settlements s WHERE s.barrier_id = b.id AND s.settled_state IS NULL)::int AS pending
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
  return prisma().$transaction(
    async (tx) => {
      const out = new Map<string, QuietOutcome>();
      for (const id of barrierIds) out.set(id, await enterQuietTx(tx, id, workerId));
      return out;
    },
    { timeout: 120_000 },
  );
}

/** completeBarrier for many, in one transaction: every receipt's audit row appended at the end, together. */
export async function completeMany(p: Principal, barrierIds: string[], workerId: string): Promise<Map<string, CompleteOutcome>> {
  system(p);
  return prisma().$transaction(
    async (tx) => {
      const batch = newReceiptBatch();
      const out = new Map<string, CompleteOutcome>();
      for (const id of barrierIds) out.set(id, await completeBarrierTx(tx, id, workerId, batch));
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
