// Contract between the operations API (lib/modules/runs/operations.ts) and the barrier. Internal dal helper
// (it writes inside the operations API's transaction; the caller checked that the reporter HOLDS the
// operation): a completion reported after its run tree was killed is denied to the caller but never
// dropped — it is kept as a CLAIM (operation_claims), evidence of what the agent says, with its time.
//
// A claim settles nothing (docs/evidence.md#claims): only the provider's effect check or a person does.
//  - a pending settlement stays pending: the engine's effect check (or its deadline) decides;
//  - a settled one keeps its verdict and its open reconciliation, if any — the person sees the claim;
//  - work recorded as never started (cancelled or denied) that the holder says ran is no longer known
//    not to have happened: its outcome becomes unknown, for a person to reconcile.
// The same report again is the same claim: nothing is written, no quiet period restarts, no receipt
// version follows. A new claim restarts the quiet period so the next receipt version shows it.
import "server-only";
import type { Tx } from "../../platform/db/prisma";
import { newId } from "../../platform/ids";
import { canonicalJson, sha256Hex } from "../../control/canonical";
import { coveringBarrierTx, restartQuietTx, settleTx } from "./settlements";
import { lockBarrierTx } from "./internal/receipts";
import { notifyControl } from "../../platform/db/notify";
import { coveringBarriersTx } from "./internal/evidence";

export interface LateReport {
  operationRowId: string;
  teamId: string;
  runId: string;
  /** aborted_unknown: the executor (e.g. the MCP gateway) gave up waiting; like failed, it proves nothing. */
  outcome: "succeeded" | "failed" | "aborted_unknown";
  effect?: { providerOperationId: string; detail?: unknown };
  reportedBy: string;
}

const NOT_STARTED = new Set(["cancelled_not_started", "denied"]);

/** Returns whether the report was a new claim (false: the same claim was already recorded). */
export async function recordLateReport(tx: Tx, report: LateReport): Promise<boolean> {
  const op = await tx.operation.findUnique({ where: { id: report.operationRowId } });
  if (!op) return false;
  const at = new Date();
  const effect = report.effect ? { providerOperationId: report.effect.providerOperationId, detail: report.effect.detail ?? null } : null;
  const digest = sha256Hex(canonicalJson({ outcome: report.outcome, effect }));
  const inserted = await tx.$queryRawUnsafe<{ id: string }[]>(
    `INSERT INTO operation_claims (id, team_id, operation_id, outcome, provider_operation_id, detail, reported_by, digest, claimed_at)
     VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7, $8, $9)
     ON CONFLICT (operation_id, digest) DO NOTHING RETURNING id`,
    newId("clm"),
    report.teamId,
    op.id,
    report.outcome,
    effect?.providerOperationId ?? null,
    effect ? JSON.stringify(effect.detail) : null,
    report.reportedBy,
    digest,
    at,
  );
  if (inserted.length === 0) return false;

  const barrier = await coveringBarrierTx(tx, op.runId);
  const run = await tx.run.findUnique({ where: { id: op.runId }, select: { epoch: true, rootRunId: true } });
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
  if (!barrier) return true;
  // Every barrier above the run accounts for this operation (the completion rule covers the whole
  // subtree): lock them all, oldest first — the order reconciliation writes use too.
  const covering = await coveringBarriersTx(tx, op.runId);
  for (const c of covering) await lockBarrierTx(tx, c.id);

  if (NOT_STARTED.has(op.state)) {
    // "It never started" was the record; the holder says it ran. Nobody can prove either now.
    let settlement = await tx.settlement.findFirst({ where: { operationId: op.id }, orderBy: { id: "desc" } });
    settlement ??= await tx.settlement.create({
      data: { id: newId("set"), barrierId: barrier.id, operationId: op.id, stateAtBarrier: op.state, effectExpected: "absence" },
    });
    await settleTx(tx, {
      settlementId: settlement.id,
      teamId: report.teamId,
      state: "unknown",
      cause: "cancel_unacknowledged",
      at,
      onlyIfPending: false,
      reason: `unknown: recorded as not started, but ${report.reportedBy} claims it ran (${report.outcome})`,
    });
  }
  for (const c of covering) await restartQuietTx(tx, c.id, at);
  if (run) await notifyControl(tx, { kind: "settlement", teamId: report.teamId, rootRunId: run.rootRunId, barrierId: barrier.id });
  return true;
}
