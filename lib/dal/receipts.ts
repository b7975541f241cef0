// Issuing stop receipts (docs/architecture.md#the-stop-receipt). Transaction-level: the engine (after the quiet period),
// reconciliation writes and late reports call issueReceiptTx inside their own transaction, with the
// barrier row locked, so a version number is taken exactly once and the receipt commits together
// with the change that caused it. Old versions are never touched.
import "server-only";
import type { Tx } from "../db/prisma";
import { newId } from "../ids";
import { buildReceipt, type ReceiptFacts } from "../control/receipt";
import { notifyControl } from "./notify";
import { appendAudit } from "./audit";
import { subtreeRunIdsTx } from "./settlements";
import type { SettledState } from "../control/types";

/** Late requests: every deny recorded under the barrier's subtree since the barrier was requested. */
export async function countLateRequestsTx(tx: Tx, runIds: string[], since: Date): Promise<number> {
  const rows = await tx.$queryRawUnsafe<{ n: number }[]>(
    `SELECT count(*)::int AS n FROM gate_decisions WHERE run_id = ANY ($1::text[]) AND at >= $2 AND decision = 'deny'`, runIds, since);
  return rows[0]?.n ?? 0;
}

export async function receiptFactsTx(tx: Tx, barrierId: string, verifiedAt: Date): Promise<{ facts: ReceiptFacts; teamId: string; rootRunId: string }> {
  const b = await tx.barrier.findUniqueOrThrow({ where: { id: barrierId }, include: { run: { select: { rootRunId: true, epoch: true } } } });
  const runIds = await subtreeRunIdsTx(tx, b.runId);
  const [leases] = await tx.$queryRawUnsafe<{ root_total: number; root_active: number; desc_revoked: number; active: number }[]>(
    `SELECT count(*) FILTER (WHERE run_id = $2)::int AS root_total,
            count(*) FILTER (WHERE run_id = $2 AND revoked_at IS NULL AND valid_until > now())::int AS root_active,
            count(*) FILTER (WHERE run_id <> $2 AND revoked_at IS NOT NULL)::int AS desc_revoked,
            count(*) FILTER (WHERE revoked_at IS NULL AND valid_until > now())::int AS active
       FROM leases WHERE run_id = ANY ($1::text[])`, runIds, b.runId);
  const settlements = await tx.settlement.findMany({
    where: { barrierId },
    orderBy: { id: "asc" },
    include: { operation: { select: { id: true, operationId: true, tool: true, providerName: true, providerJobId: true } }, reconciliation: true },
  });
  const opIds = settlements.map((s) => s.operation.id);
  const [effects, intervals] = await Promise.all([
    // Every effect of the stopped subtree, not only the in-flight ones: docs/architecture.md#barriers wants an effect that
    // completed before the stop in the review packet too, with its rollback owner.
    tx.effectReceipt.findMany({
      where: { operation: { runId: { in: runIds } } },
      include: { operation: { select: { operationId: true } } },
      orderBy: [{ committedAt: "asc" }, { id: "asc" }],
    }),
    tx.uncertainInterval.findMany({ where: { operationId: { in: opIds } }, orderBy: { startedAt: "asc" } }),
  ]);
  const assigneeIds = [...new Set(settlements.map((s) => s.reconciliation?.assigneeUserId).filter((x): x is string => !!x))];
  const users = assigneeIds.length ? await tx.user.findMany({ where: { id: { in: assigneeIds } }, select: { id: true, email: true } }) : [];
  const email = new Map(users.map((u) => [u.id, u.email]));
  const previous = await tx.stopReceipt.findFirst({ where: { barrierId }, orderBy: { version: "desc" }, select: { version: true, digest: true } });
  const acks = b.observedAt && b.observedMeaning ? { meaning: b.observedMeaning, at: b.observedAt } : null;

  const facts: ReceiptFacts = {
    barrierId, runId: b.runId, version: (previous?.version ?? 0) + 1, previousDigest: previous?.digest ?? null,
    requestedAt: b.requestedAt, requestedBy: b.requestedBy, reason: b.reason,
    rootLease: !leases || leases.root_total === 0 ? "none" : leases.root_active > 0 ? "active" : "revoked",
    descendantLeasesRevoked: leases?.desc_revoked ?? 0,
    activeLeases: leases?.active ?? 0,
    currentEpoch: b.run.epoch,
    queuedCancelled: b.queuedCancelled, scheduledCancelled: b.scheduledCancelled, retriesCancelled: b.retriesCancelled,
    settlements: settlements.map((s) => ({
      operationId: s.operation.operationId, tool: s.operation.tool, providerName: s.operation.providerName, providerJob: s.operation.providerJobId,
      stateAtBarrier: s.stateAtBarrier, cancelRequestedAt: s.cancelRequestedAt, providerResponse: s.providerResponse,
      effectExpected: s.effectExpected, effectObserved: s.effectObserved, effectCheckedAt: s.effectCheckedAt,
      settledState: s.settledState as SettledState | null, settledAt: s.settledAt, settledReason: s.settledReason,
    })),
    reconciliations: settlements.filter((s) => s.reconciliation).map((s) => {
      const r = s.reconciliation!;
      const cause = intervals.filter((i) => i.operationId === s.operation.id).at(-1)?.cause ?? null;
      return { operationId: s.operation.operationId, assignee: r.assigneeUserId ? email.get(r.assigneeUserId) ?? r.assigneeUserId : null, status: r.status, cause, resolution: r.resolution };
    }),
    effectReceipts: effects.map((e) => ({
      operationId: e.operation.operationId, providerOperationId: e.providerOperationId, committedAt: e.committedAt,
      rollbackOwner: e.rollbackOwner, source: e.source, detail: e.detail,
    })),
    observed: acks,
    lateRequestsDenied: await countLateRequestsTx(tx, runIds, b.requestedAt),
    quietPeriodSeconds: b.quietPeriodSeconds ?? 0,
    verifiedAt,
  };
  return { facts, teamId: b.teamId, rootRunId: b.run.rootRunId };
}

/**
 * Issues the next receipt version. The caller holds the barrier row lock (SELECT … FOR UPDATE) and has
 * checked that a receipt is due. Leaves the barrier `complete` with the receipt's decision.
 */
export async function issueReceiptTx(tx: Tx, barrierId: string, verifiedAt = new Date(), actor = "system:barrier-engine"): Promise<{ version: number; decision: "stopped_and_quiet" | "stop_incomplete"; digest: string }> {
  const { facts, teamId, rootRunId } = await receiptFactsTx(tx, barrierId, verifiedAt);
  const { body, canonical, digest, decision } = buildReceipt(facts);
  await tx.stopReceipt.create({
    data: { id: newId("rcpt"), barrierId, version: facts.version, canonical, body: body as never, decision, verifiedAt, digest },
  });
  await tx.barrier.update({
    where: { id: barrierId },
    data: { phase: "complete", decision, completedAt: verifiedAt, lateRequestsDenied: facts.lateRequestsDenied, claimedBy: null, claimExpiresAt: null },
  });
  await appendAudit(tx, { teamId, actor, action: "barrier.receipt", target: barrierId, after: { version: facts.version, decision, digest } });
  await notifyControl(tx, { kind: "receipt", teamId, rootRunId, barrierId });
  return { version: facts.version, decision, digest };
}

/** Locks the barrier row; the lock orders receipt issuance, late reports and reconciliation writes. */
export async function lockBarrierTx(tx: Tx, barrierId: string): Promise<void> {
  await tx.$queryRawUnsafe(`SELECT id FROM barriers WHERE id = $1 FOR UPDATE`, barrierId);
}
