// An independent statement of the stop-evidence invariants (docs/evidence.md) over the facts of a subtree, written
// separately from lib/control/evidence (not by calling it), so a test that compares the two catches a
// model that drifts from the rules. Used by the pure property test and the model-based test.
import type { EvidenceFacts } from "../../lib/control/evidence/model";

/** A supervised run's environment is verified empty: its supervisor read the container empty, nothing survived, every process ended — or a person checked. */
function environmentVerified(r: EvidenceFacts["runs"][number]): boolean {
  if (r.environment?.resolvedBy && r.environment.resolvedAt) return true; // a person checked it (named in the receipt)
  const e = r.environment?.evidence;
  return !!e && typeof e.emptyAt === "string" && e.survivors.length === 0 && !e.processes.some((p) => p.ended === "not_ended");
}

const TERMINAL_KNOWN = new Set(["succeeded", "failed", "cancelled_not_started", "denied"]);

/** The fact behind each rung: the rung must be "done" exactly when this holds (I5). */
export function rungFacts(f: EvidenceFacts): Record<string, boolean> {
  const ops = f.operations;
  const quietOver = f.barrier.quietUntil !== null && f.now.getTime() >= f.barrier.quietUntil.getTime();
  const everyKnown = ops.every((o) => TERMINAL_KNOWN.has(o.state));
  const openRec = ops.some((o) => o.reconciliation && o.reconciliation.status !== "resolved");
  return {
    cancellation_requested: true,
    observed_by_target: f.runs.length > 0 && f.runs.every((r) => r.acknowledgment !== null),
    new_work_prevented: f.barrier.dispatchStoppedAt !== null && f.runs.every((r) => r.lifecycle === "killed") && f.leases.active === 0,
    queued_work_cancelled: f.barrier.queuedCancelledAt !== null && !ops.some((o) => o.state === "queued" || o.state === "scheduled"),
    execution_quiesced: everyKnown,
    effects_settled: everyKnown && !openRec && quietOver,
    receipt_issued: f.receipts.length > 0,
    // Only on the ladder when a run was supervised; never "done" for a run nobody supervised.
    environment_terminated: f.runs.some((r) => r.environment) && f.runs.every((r) => !r.environment || environmentVerified(r)),
  };
}

/** I1: what `stopped_and_quiet` must imply. Returns the first violated clause, or null. */
export function i1Violation(f: EvidenceFacts): string | null {
  const bad = f.operations.find((o) => !TERMINAL_KNOWN.has(o.state));
  if (bad) return `operation ${bad.operationId} is ${bad.state}`;
  const open = f.operations.find((o) => o.reconciliation && o.reconciliation.status !== "resolved");
  if (open) return `reconciliation of ${open.operationId} is ${open.reconciliation!.status}`;
  if (f.leases.active > 0) return `${f.leases.active} active leases`;
  if (f.barrier.quietUntil === null || f.now.getTime() < f.barrier.quietUntil.getTime()) return "quiet period not over";
  const unverified = f.runs.find((r) => r.environment && !environmentVerified(r));
  if (unverified) return `environment of ${unverified.id} not verified empty`;
  return null;
}
