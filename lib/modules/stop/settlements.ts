// Settlement writes shared by the barrier engine, late reports and reconciliation (docs/architecture.md#the-cancellation-barrier).
// Transaction-level helpers: callers pass the transaction that also carries their audit row /
// authorization, so a settlement, its EffectReceipt or UncertainInterval + Reconciliation, and the
// operation's final state commit together.
import "server-only";
import type { Tx } from "../../platform/db/prisma";
import { newId } from "../../platform/ids";
import { operationStateFor, type UncertainCause } from "../../control/settlement";
import { quietUntil } from "../../control/barrier";
import { whyUnknownWords } from "../../control/stop-words";
import { unknownFactsOf } from "./internal/read-shapes";
import type { SettledState } from "../../control/types";

export interface EffectRecord {
  providerOperationId: string | null;
  committedAt: Date;
  detail: unknown;
  rollbackOwner: string | null;
  /** executor | provider | reconciliation */
  source: "executor" | "provider" | "reconciliation";
}

export interface SettleInput {
  /** The settlement under a barrier; null settles an operation no barrier saw in flight (an unknown outcome). */
  settlementId: string | null;
  /** Required when settlementId is null. */
  operationRowId?: string;
  teamId: string;
  state: SettledState;
  at: Date;
  reason: string;
  cause?: UncertainCause;
  effect?: EffectRecord;
  /** Engine writes settle only a pending settlement; late evidence may overturn an earlier verdict. */
  onlyIfPending: boolean;
  /** Who supplied the evidence that closes an open reconciliation (actor string). */
  resolvedBy?: string;
}

/**
 * Returns false when nothing was written (already settled by someone else). An `unknown` verdict opens
 * the uncertain interval here (with the barrier's cause); the operation's new state then opens its
 * reconciliation with a default owner (the operations_open_uncertainty trigger does that for every
 * aborted_unknown, barrier or not).
 */
export async function settleTx(tx: Tx, s: SettleInput): Promise<boolean> {
  let op: { id: string; runId: string };
  let startedAt: Date | null = null;
  let whyUnknown: string | null = null;
  // Only evidence that closes an open reconciliation (below) needs its "why unknown" kept.
  const mayClose = s.state !== "unknown" && (!s.onlyIfPending || !s.settlementId);
  if (s.settlementId) {
    const cur = await tx.settlement.findUnique({
      where: { id: s.settlementId },
      select: { id: true, settledState: true, cancelRequestedAt: true, operation: { select: { id: true, runId: true } } },
    });
    if (!cur) return false;
    // Read before this settlement's reason is overwritten below.
    if (mayClose) whyUnknown = await whyUnknownTx(tx, cur.operation.id);
    const where = s.onlyIfPending ? { id: s.settlementId, settledState: null } : { id: s.settlementId };
    const n = await tx.settlement.updateMany({ where, data: { settledState: s.state, settledAt: s.at, settledReason: s.reason } });
    if (n.count === 0) return false;
    op = cur.operation;
    startedAt = cur.cancelRequestedAt;
  } else {
    const row = s.operationRowId
      ? await tx.operation.findUnique({ where: { id: s.operationRowId }, select: { id: true, runId: true } })
      : null;
    if (!row) return false;
    op = row;
    if (mayClose) whyUnknown = await whyUnknownTx(tx, row.id);
  }
  if (s.effect) {
    await tx.effectReceipt.create({
      data: {
        id: newId("eff"),
        teamId: s.teamId,
        operationId: op.id,
        providerOperationId: s.effect.providerOperationId,
        detail: (s.effect.detail ?? undefined) as never,
        committedAt: s.effect.committedAt,
        rollbackOwner: s.effect.rollbackOwner,
        source: s.effect.source,
      },
    });
  }
  if (s.state === "unknown") {
    // The truth is not known from the moment the cancel was requested; a person must settle it.
    const open = await tx.uncertainInterval.count({ where: { operationId: op.id, endedAt: null } });
    if (open === 0) {
      await tx.uncertainInterval.create({
        data: {
          id: newId("unc"),
          teamId: s.teamId,
          runId: op.runId,
          operationId: op.id,
          cause: s.cause ?? "cancel_unacknowledged",
          startedAt: startedAt ?? s.at,
        },
      });
    }
  } else if (!s.onlyIfPending || !s.settlementId) {
    // Evidence arrived (late report, reconciliation): the uncertain interval ends here, and an open
    // reconciliation is closed by that evidence (resolveReconciliation closes its own first).
    await tx.uncertainInterval.updateMany({ where: { operationId: op.id, endedAt: null }, data: { endedAt: s.at, resolution: s.state } });
    await tx.reconciliation.updateMany({
      where: { operationId: op.id, status: { not: "resolved" } },
      data: {
        status: "resolved",
        resolution: s.state === "completed_and_verified" ? "effect_present" : "effect_absent",
        evidence: s.reason,
        resolvedAt: s.at,
        resolvedBy: s.resolvedBy ?? "system:barrier",
        unknownReason: whyUnknown,
      },
    });
  }
  await tx.operation.update({
    where: { id: op.id },
    data: {
      state: operationStateFor(s.state),
      stateReason: s.state === "unknown" ? (s.cause ?? "cancel_unacknowledged") : s.state,
      finishedAt: s.at,
    },
  });
  return true;
}

/**
 * Why the operation's open reconciliation (if any) is unknown, as the queue shows it — read before a
 * settlement overwrites the reasons it is made of. Null when nothing is open.
 */
export async function whyUnknownTx(tx: Tx, operationRowId: string): Promise<string | null> {
  const r = await tx.reconciliation.findUnique({
    where: { operationId: operationRowId },
    select: {
      status: true,
      settlement: { select: { providerResponse: true } },
      operation: {
        select: {
          teamId: true,
          providerName: true,
          uncertainIntervals: { orderBy: { startedAt: "desc" }, take: 1, select: { cause: true } },
        },
      },
    },
  });
  if (!r || r.status === "resolved") return null;
  const name = r.operation.providerName;
  const hasProvider = !!name && (await tx.provider.count({ where: { teamId: r.operation.teamId, name } })) > 0;
  // The words the barrier's evidence and the open-work queue use for it, kept past the resolution.
  return whyUnknownWords(unknownFactsOf(r, hasProvider));
}

/**
 * A late effect restarts the quiet period (docs/ideas.md#barriers: the quiet period catches delayed callbacks). A
 * barrier that already issued its receipt reopens into `quiet`; the engine issues the next version
 * when the restarted period ends. Barriers still settling have not started their quiet period.
 */
export async function restartQuietTx(tx: Tx, barrierId: string, at: Date): Promise<void> {
  const b = await tx.barrier.findUnique({ where: { id: barrierId }, select: { phase: true, quietPeriodSeconds: true } });
  if (!b || (b.phase !== "quiet" && b.phase !== "complete")) return;
  await tx.barrier.update({
    where: { id: barrierId },
    data: {
      phase: "quiet",
      quietUntil: quietUntil(at, b.quietPeriodSeconds ?? 0),
      claimedBy: null,
      claimExpiresAt: null,
      lastSettledAt: at,
    },
  });
}

/** The barrier that covers a run: the latest one on the run or any ancestor. */
/** The newest barrier over the run or an ancestor ($1 = run id). */
export const COVERING_BARRIER_SQL = `SELECT b.id, b.team_id, b.run_id, b.phase::text AS phase FROM barriers b
       JOIN runs r ON r.id = $1 AND b.run_id = ANY (r.path)
      ORDER BY b.requested_at DESC LIMIT 1`;

export async function coveringBarrierTx(
  tx: Tx,
  runId: string,
): Promise<{ id: string; teamId: string; runId: string; phase: string } | null> {
  const rows = await tx.$queryRawUnsafe<{ id: string; team_id: string; run_id: string; phase: string }[]>(COVERING_BARRIER_SQL, runId);
  const r = rows[0];
  return r ? { id: r.id, teamId: r.team_id, runId: r.run_id, phase: r.phase } : null;
}

/** Run ids of a barrier's subtree (the killed run and its descendants). */
export async function subtreeRunIdsTx(tx: Tx, runId: string): Promise<string[]> {
  const rows = await tx.$queryRawUnsafe<{ id: string }[]>(
    `SELECT c.id FROM runs r JOIN runs c ON c.root_run_id = r.root_run_id AND r.id = ANY (c.path) WHERE r.id = $1`,
    runId,
  );
  return rows.map((r) => r.id);
}
