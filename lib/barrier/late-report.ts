// Contract between the operations API (lib/dal/operations.ts) and the barrier (issue 3):
// a completion or effect report for an operation whose run tree is killed is denied to the caller but
// never dropped — the barrier records it as evidence (a late effect turns its settlement into
// completed_and_verified and restarts the quiet period). Implemented by the barrier work.
import type { Tx } from "../db/prisma";

export interface LateReport {
  operationRowId: string;
  teamId: string;
  runId: string;
  outcome: "succeeded" | "failed";
  effect?: { providerOperationId: string; detail?: unknown };
  reportedBy: string;
}

export async function recordLateReport(_tx: Tx, _report: LateReport): Promise<void> {
  throw new Error("recordLateReport: not implemented yet (barrier issue)");
}
