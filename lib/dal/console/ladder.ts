// The stop ladder shown to the operator (docs/architecture.md#the-cancellation-barrier; the barrier article's
// (docs/architecture.md#barriers) five questions): each rung with its
// evidence and time. Pure: barrier facts in, rungs out. "Requested" without an acknowledgment is shown
// as pending or uncertain — never as stopped.
import "server-only";
import { describeObservedMeaning } from "../../control/barrier";

export type RungStatus = "done" | "pending" | "uncertain" | "not_applicable";

export interface Rung { key: string; label: string; status: RungStatus; at: string | null; detail: string }

export interface LadderFacts {
  phase: "revoking" | "settling" | "quiet" | "complete";
  requestedAt: string; requestedBy: string; reason: string;
  observedAt: string | null; observedMeaning: string | null;
  dispatchStoppedAt: string | null;
  queuedCancelledAt: string | null; queuedCancelled: number; scheduledCancelled: number; retriesCancelled: number;
  quiescedAt: string | null; inFlight: number;
  lastSettledAt: string | null;
  settled: { cancelledWithoutEffect: number; completedAndVerified: number; unknown: number; pending: number };
  openReconciliations: number;
  quietUntil: string | null; completedAt: string | null; decision: "stopped_and_quiet" | "stop_incomplete" | null;
}

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

export function ladderOf(f: LadderFacts): Rung[] {
  const finished = f.phase === "complete";
  const cancelledTotal = f.queuedCancelled + f.scheduledCancelled + f.retriesCancelled;
  const s = f.settled;
  const settledDone = s.pending === 0 && s.unknown === 0 && f.openReconciliations === 0;
  return [
    { key: "requested", label: "Cancellation requested", status: "done", at: f.requestedAt, detail: `by ${f.requestedBy}: “${f.reason}”` },
    f.observedAt
      ? { key: "observed", label: "Observed by target", status: "done", at: f.observedAt, detail: f.observedMeaning ? `harness acknowledged: ${f.observedMeaning.replaceAll("_", " ")} — ${describeObservedMeaning(f.observedMeaning)}` : "harness acknowledged" }
      : { key: "observed", label: "Observed by target", status: finished ? "uncertain" : "pending", at: null,
          detail: finished ? "no acknowledgment from the target; authority was revoked at every gate regardless" : "waiting for the harness to acknowledge (uncertain until it does)" },
    f.dispatchStoppedAt
      ? { key: "dispatch", label: "New work prevented", status: "done", at: f.dispatchStoppedAt, detail: "leases revoked, epoch raised: every gate now denies" }
      : { key: "dispatch", label: "New work prevented", status: "pending", at: null, detail: "revoking authority" },
    f.queuedCancelledAt
      ? { key: "queued", label: "Queued work cancelled", status: "done", at: f.queuedCancelledAt,
          detail: `${plural(f.queuedCancelled, "queued job")}, ${plural(f.scheduledCancelled, "scheduled job")}, ${plural(f.retriesCancelled, "retry", "retries")} cancelled and kept` + (cancelledTotal === 0 ? " (nothing was queued)" : "") }
      : { key: "queued", label: "Queued work cancelled", status: "pending", at: null, detail: "cancelling queued, scheduled and retry work" },
    f.quiescedAt
      ? { key: "quiesced", label: "Execution quiesced", status: "done", at: f.quiescedAt, detail: f.inFlight === 0 ? "nothing was in flight" : `${plural(f.inFlight, "in-flight call")} answered by its provider` }
      : { key: "quiesced", label: "Execution quiesced", status: "pending", at: null, detail: f.inFlight === 0 ? "confirming nothing is in flight" : `${plural(f.inFlight, "in-flight call")} still being cancelled` },
    {
      key: "settled", label: "Effects settled / evidence reconciled",
      status: settledDone && (f.lastSettledAt || f.inFlight === 0) && (finished || f.phase === "quiet") ? "done" : s.unknown > 0 ? "uncertain" : "pending",
      at: f.lastSettledAt,
      detail: `${s.cancelledWithoutEffect} cancelled without effect, ${s.completedAndVerified} completed and verified, ${s.unknown} unknown` +
        (s.pending > 0 ? `, ${s.pending} still settling` : "") + (f.openReconciliations > 0 ? ` — ${plural(f.openReconciliations, "reconciliation")} open` : ""),
    },
    f.completedAt
      ? { key: "receipt", label: "Receipt issued", status: f.decision === "stopped_and_quiet" ? "done" : "uncertain", at: f.completedAt, detail: (f.decision ?? "").replaceAll("_", " ") }
      : { key: "receipt", label: "Receipt issued", status: "pending", at: null, detail: f.quietUntil ? "quiet period running: late requests are denied and recorded" : "waiting for the barrier to finish" },
  ];
}
