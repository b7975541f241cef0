// The stop ladder shown to the operator (docs/architecture.md#the-cancellation-barrier): the stop article's
// (docs/architecture.md#five-questions) five questions and the barrier article's (docs/architecture.md#barriers)
// four meanings of "stopped", rung by rung, each with a status, a time and its evidence. Pure.
//
// A request that nobody acknowledged reads as pending (while the barrier works) or uncertain (after
// it finished) — never as stopped.

import { describeObservedMeaning } from "./barrier";

export const RUNG_STATUSES = ["done", "pending", "uncertain", "incomplete"] as const;
export type RungStatus = (typeof RUNG_STATUSES)[number];

export const RUNG_IDS = [
  "cancellation_requested",
  "observed_by_target",
  "new_work_prevented",
  "queued_work_cancelled",
  "execution_quiesced",
  "effects_settled",
] as const;
export type RungId = (typeof RUNG_IDS)[number];

export interface Rung {
  id: RungId;
  label: string;
  /** The article's stop state this rung establishes, when it establishes one. */
  stopState: "generation_stopped" | "dispatch_stopped" | "queued_work_cancelled" | "effects_settled" | null;
  status: RungStatus;
  at: string | null;
  evidence: Record<string, unknown>;
}

export interface LadderFacts {
  requestedAt: Date;
  requestedBy: string;
  reason: string;
  phase: "revoking" | "settling" | "quiet" | "complete";
  decision: "stopped_and_quiet" | "stop_incomplete" | null;
  observed: { at: Date; meaning: string; acks: unknown[] } | null;
  dispatchStoppedAt: Date | null;
  queuedCancelledAt: Date | null;
  quiescedAt: Date | null;
  completedAt: Date | null;
  quietUntil: Date | null;
  newEpoch: number;
  runsKilled: number;
  leasesRevoked: number;
  queuedCancelled: number;
  scheduledCancelled: number;
  retriesCancelled: number;
  inFlight: number;
  pending: number;
  unknown: number;
  lateRequestsDenied: number;
  reconciliationHolders: string[];
}

const iso = (d: Date | null) => (d ? d.toISOString() : null);

export function buildLadder(f: LadderFacts): Rung[] {
  const finished = f.phase === "complete";
  const observed: Rung = f.observed
    ? { id: "observed_by_target", label: "Observed by target", stopState: "generation_stopped", status: "done", at: iso(f.observed.at),
        evidence: { meaning: f.observed.meaning, means: describeObservedMeaning(f.observed.meaning), acknowledgments: f.observed.acks } }
    : { id: "observed_by_target", label: "Observed by target", stopState: "generation_stopped", status: finished ? "uncertain" : "pending", at: null,
        evidence: { note: "no acknowledgment from the target; requested is not stopped" } };
  const settledStatus: RungStatus = f.decision === "stopped_and_quiet" && finished
    ? "done"
    : f.decision === "stop_incomplete" && finished ? "incomplete" : "pending";
  return [
    { id: "cancellation_requested", label: "Cancellation requested", stopState: null, status: "done", at: iso(f.requestedAt),
      evidence: { requested_by: f.requestedBy, reason: f.reason } },
    observed,
    { id: "new_work_prevented", label: "New work prevented", stopState: "dispatch_stopped",
      status: f.dispatchStoppedAt ? "done" : "pending", at: iso(f.dispatchStoppedAt),
      evidence: { runs_killed: f.runsKilled, leases_revoked: f.leasesRevoked, new_epoch: f.newEpoch, late_requests_denied: f.lateRequestsDenied } },
    { id: "queued_work_cancelled", label: "Queued work cancelled", stopState: "queued_work_cancelled",
      status: f.queuedCancelledAt ? "done" : "pending", at: iso(f.queuedCancelledAt),
      evidence: { queued_cancelled: f.queuedCancelled, scheduled_cancelled: f.scheduledCancelled, retries_cancelled: f.retriesCancelled } },
    { id: "execution_quiesced", label: "Execution quiesced", stopState: null,
      status: f.quiescedAt && f.pending === 0 ? "done" : "pending", at: f.pending === 0 ? iso(f.quiescedAt) : null,
      evidence: { in_flight: f.inFlight, pending: f.pending } },
    { id: "effects_settled", label: "Effects settled / evidence reconciled", stopState: "effects_settled",
      status: settledStatus, at: settledStatus === "pending" ? null : iso(f.completedAt),
      evidence: {
        unknown: f.unknown,
        reconciliation_holders: f.reconciliationHolders,
        ...(f.phase === "quiet" && f.quietUntil ? { quiet_until: f.quietUntil.toISOString() } : {}),
      } },
  ];
}
