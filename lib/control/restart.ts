// How a restarted run answers an operationId it inherits from the old tree (docs/evidence.md#restart). Pure:
// what completed is already applied (never repeated), what never ran runs again under an id of its own
// (operation ids are unique per team, and the old row stays the old receipt's evidence), anything else is
// denied: nothing is guessed.
import type { OperationState } from "./types";

/** One inherited operation, as the ledger lists it (lib/schemas/restart.ts). */
export interface LedgerEntry {
  operationId: string;
  runId: string;
  tool: string;
  state: OperationState;
  outcome: "already_applied" | "free_to_run" | "unsettled";
  effectReceipt: { effectReceiptId: string; providerOperationId: string | null; committedAt: string } | null;
}

/** A gate answer given from the ledger alone (a GateResponse). */
export interface LedgerDenial {
  decision: "deny";
  reason: "already_applied" | "missing_state";
  currentEpoch: null;
  operation?: { operationId: string; state: OperationState; effectReceipt: LedgerEntry["effectReceipt"] };
}

/** The id a free-to-run operation gets in the new run: stable, so a replay inside the new run is idempotent. */
export function replayedOperationId(operationId: string, runId: string): string {
  return `${operationId}@${runId}`;
}

export function ledgerAnswer(entry: LedgerEntry, runId: string): { local: LedgerDenial } | { operationId: string } {
  if (entry.outcome === "free_to_run") return { operationId: replayedOperationId(entry.operationId, runId) };
  if (entry.outcome === "already_applied")
    return {
      local: {
        decision: "deny",
        reason: "already_applied",
        currentEpoch: null,
        operation: { operationId: entry.operationId, state: entry.state, effectReceipt: entry.effectReceipt },
      },
    };
  return { local: { decision: "deny", reason: "missing_state", currentEpoch: null } };
}
