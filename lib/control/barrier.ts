// The cancellation barrier's vocabulary and the small decisions around it
// (docs/architecture.md#the-cancellation-barrier, docs/ideas.md#barriers).
// Pure: plain data in, plain data out.
//
// Phases: revoking (the kill transaction committed; after-commit work such as cancelling jobs in real
// queues is still to be done) -> settling (in-flight operations are asked to cancel and checked) ->
// quiet (everything settled; waiting out the quiet period) -> complete (a receipt version is issued).
// A late effect reopens a complete barrier into `quiet`; the next receipt is a new version.

export const BARRIER_PHASES = ["revoking", "settling", "quiet", "complete"] as const;
export type BarrierPhase = (typeof BARRIER_PHASES)[number];

// Weakest first. `unknown`: a supervisor could not verify its environment empty (docs/environment.md).
export const OBSERVED_MEANINGS = ["unknown", "signal_accepted", "turn_interrupted", "process_terminated"] as const;
export type ObservedMeaning = (typeof OBSERVED_MEANINGS)[number];

/**
 * What each acknowledgment proves — and what it does not (docs/ideas.md#five-questions: "Record what the acknowledgment
 * actually means. It may mean 'signal accepted', not 'process terminated' or 'side effects rolled back'").
 * Shown beside the "observed by target" rung.
 */
export const OBSERVED_MEANING_TEXT: Record<ObservedMeaning, string> = {
  unknown:
    "the target's supervisor could not verify that every process ended — not proof that it stopped; nothing is claimed about its processes",
  signal_accepted: "the target accepted the stop signal — not proof that it stopped, nor that any effect was undone",
  turn_interrupted:
    "the harness interrupted the current turn (the model stopped) — delegated work and effects already caused are settled separately",
  process_terminated: "the target's process ended — effects it had already caused stay as they are and are settled separately",
};

export function describeObservedMeaning(meaning: string): string {
  return Object.hasOwn(OBSERVED_MEANING_TEXT, meaning)
    ? OBSERVED_MEANING_TEXT[meaning as ObservedMeaning]
    : "an acknowledgment of unknown meaning — treat it as signal accepted";
}

/** An acknowledgment means no more than it says (docs/ideas.md#five-questions): a stronger meaning never gets downgraded. */
export function strongerMeaning(a: ObservedMeaning | null, b: ObservedMeaning): ObservedMeaning {
  if (a === null) return b;
  return OBSERVED_MEANINGS.indexOf(b) > OBSERVED_MEANINGS.indexOf(a) ? b : a;
}

/** The durable policy written with the barrier, shaped like the article's `cancellation_barrier`. */
export function barrierPolicy(i: { rootLeaseId: string | null; newEpoch: number }) {
  return {
    revoke: { root_lease: i.rootLeaseId, descendants: true, new_revocation_epoch: i.newEpoch },
    queue_policy: { reject_not_started: true, retain_for_audit: true },
    in_flight_policy: { request_provider_cancel: true, reconcile_effects: true },
    completion_rule: { pending_calls: 0, unknown_outcomes: 0, active_leases: 0 },
  };
}

/**
 * A barrier stays open until a receipt says stopped_and_quiet: while it settles, waits out its quiet
 * period, or holds unknown outcomes (stop_incomplete keeps the barrier open, docs/ideas.md#barriers).
 */
export function isBarrierOpen(phase: BarrierPhase, decision: "stopped_and_quiet" | "stop_incomplete" | null): boolean {
  return phase !== "complete" || decision !== "stopped_and_quiet";
}

/** Work-queue providers named "<queue>:<name>" without a providers row settle like a local queue. */
export const QUEUE_PROVIDER_PREFIXES = ["pg-boss:", "bullmq:"] as const;
export const QUEUE_DEFAULT_QUIET_SECONDS = 5;

export function isQueueProvider(name: string | null | undefined): boolean {
  return !!name && QUEUE_PROVIDER_PREFIXES.some((p) => name.startsWith(p));
}

/**
 * The quiet period of a barrier: the longest of the team's own period (the floor every stop waits
 * out, also when no provider was touched: a harness tool call may still call back) and the periods of
 * the providers its subtree touched (a local queue and a third-party deployment service settle
 * differently). A provider row's own value wins; a queue without a row gets the queue default.
 */
export function quietPeriodFor(providers: { name: string; quietPeriodSeconds: number | null }[], teamSeconds: number): number {
  let q = Math.max(0, teamSeconds);
  for (const p of providers) {
    const s = p.quietPeriodSeconds ?? (isQueueProvider(p.name) ? QUEUE_DEFAULT_QUIET_SECONDS : 0);
    q = Math.max(q, s);
  }
  return q;
}

/** When the quiet period ends, counted from the last settlement (or from a late effect that restarts it). */
export function quietUntil(from: Date, quietPeriodSeconds: number): Date {
  return new Date(from.getTime() + quietPeriodSeconds * 1000);
}
