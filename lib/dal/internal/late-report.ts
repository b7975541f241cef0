// Contract between the operations API (lib/dal/operations.ts) and the barrier. Internal dal helper
// (it writes inside the operations API's transaction; the caller authorized the report):
// a completion or effect report for an operation whose run tree is killed is denied to the caller but
// never dropped — the barrier records it as evidence (a late effect turns its settlement into
// completed_and_verified and restarts the quiet period).
//
// Called inside the operations API's transaction, so the evidence commits with its own records.
//  - always: a gate_decisions row (source "complete", deny killed / parent_revoked) — counted as a
//    late request on the barrier;
//  - outcome "succeeded": the effect happened under the old run id. Its settlement (created now if
//    the operation was not in flight — e.g. a worker ran cancelled work without admitting it) becomes
//    completed_and_verified with an executor EffectReceipt, whatever it said before (truth wins over
//    a tidy receipt); the quiet period restarts, and a barrier that already issued its receipt
//    reopens so the engine issues a new version;
//  - outcome "failed" / "aborted_unknown": recorded on the settlement as evidence; it proves nothing
//    about the effect (a failed call may still have committed remotely).
import "server-only";
import type { Tx } from "../../db/prisma";
import { newId } from "../../ids";
import { coveringBarrierTx, restartQuietTx, settleTx } from "./settlements";
import { lockBarrierTx } from "./receipts";
import { notifyControl } from "./notify";
import { coveringBarriersTx } from "./evidence";

export interface LateReport {
  operationRowId: string;
  teamId: string;
  runId: string;
  /** aborted_unknown: the executor (e.g. the MCP gateway) gave up waiting; like failed, it proves nothing. */
  outcome: "succeeded" | "failed" | "aborted_unknown";
  effect?: { providerOperationId: string; detail?: unknown };
  reportedBy: string;
}

export async function recordLateReport(tx: Tx, report: LateReport): Promise<void> {
  const op = await tx.operation.findUnique({ where: { id: report.operationRowId } });
  if (!op) return;
  const barrier = await coveringBarrierTx(tx, op.runId);
  const run = await tx.run.findUnique({ where: { id: op.runId }, select: { epoch: true, rootRunId: true } });
  const at = new Date();
  await tx.gateDecision.create({
    data: {
      teamId: report.teamId,
      runId: op.runId,
      operationId: op.operationId,
      source: "complete",
      decision: "deny",
      reason: barrier && barrier.runId !== op.runId ? "parent_revoked" : "killed",
      epochSeen: op.epochStamp,
      currentEpoch: run?.epoch ?? null,
      at,
    },
  });
  if (!barrier) return;
  // The operation's own settlement (possibly under an earlier barrier of a subtree) carries the evidence.
  let settlement = await tx.settlement.findFirst({ where: { operationId: op.id }, orderBy: { id: "desc" } });
  const barrierId = settlement?.barrierId ?? barrier.id;
  // Every barrier above the run accounts for this operation (the completion rule covers the whole
  // subtree): lock them all, oldest first — the order reconciliation writes use too.
  const covering = await coveringBarriersTx(tx, op.runId);
  for (const c of covering) await lockBarrierTx(tx, c.id);
  const evidence = { outcome: report.outcome, effect: report.effect ?? null, reportedBy: report.reportedBy, at: at.toISOString() };

  if (report.outcome !== "succeeded") {
    if (settlement && settlement.settledState === null) {
      const prior = (settlement.effectCheckDetail ?? {}) as Record<string, unknown>;
      await tx.settlement.update({
        where: { id: settlement.id },
        data: { effectCheckDetail: { ...prior, executor_report: evidence } as never },
      });
    }
    return;
  }
  // A success recorded before the barrier is not a late effect: the gate answers already_applied.
  if (!settlement && op.state === "succeeded") return;
  if (!settlement) {
    settlement = await tx.settlement.create({
      data: { id: newId("set"), barrierId, operationId: op.id, stateAtBarrier: op.state, effectExpected: "absence" },
    });
  }
  const provider = op.providerName
    ? await tx.provider.findUnique({
        where: { teamId_name: { teamId: report.teamId, name: op.providerName } },
        select: { rollbackOwner: true },
      })
    : null;
  const effect = {
    providerOperationId: report.effect?.providerOperationId ?? op.providerJobId,
    committedAt: at,
    detail: { reported: report.effect?.detail ?? null, late: true, reportedBy: report.reportedBy },
    rollbackOwner: provider?.rollbackOwner ?? null,
    source: "executor" as const,
  };
  if (settlement.settledState === "completed_and_verified") {
    // Already known to be present; keep the executor's receipt as additional evidence.
    await tx.effectReceipt.create({
      data: { id: newId("eff"), teamId: report.teamId, operationId: op.id, ...effect, detail: effect.detail as never },
    });
  } else {
    await settleTx(tx, {
      settlementId: settlement.id,
      teamId: report.teamId,
      state: "completed_and_verified",
      at,
      onlyIfPending: false,
      reason: `late effect reported by ${report.reportedBy}`,
      effect,
      resolvedBy: report.reportedBy,
    });
  }
  await tx.operation.update({ where: { id: op.id }, data: { outcomeDetail: evidence as never } });
  await tx.barrier.update({ where: { id: barrierId }, data: { lastSettledAt: at } });
  for (const c of covering) await restartQuietTx(tx, c.id, at);
  if (run) await notifyControl(tx, { kind: "settlement", teamId: report.teamId, rootRunId: run.rootRunId, barrierId });
}
