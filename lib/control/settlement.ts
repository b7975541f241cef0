// Settlement rules for in-flight operations at a cancellation barrier (docs/architecture.md#the-cancellation-barrier,
// docs/ideas.md#barriers).
// Pure: the barrier engine loads the facts (provider answers, effect checks, executor claims,
// whether the provider's deadline passed) and asks here what the operation's settled state is.
//
//   cancelled_without_effect  the provider stopped AND the authoritative system shows no effect
//   completed_and_verified    the effect is proven present by the provider's status
//   unknown                   neither can be proven before the deadline -> UncertainInterval +
//                             Reconciliation awaiting a person
//
// A provider's "accepted" is only an acknowledgment of the request, never a settled state, and an
// unknown is never rounded to cancelled. What the executor reports after the stop is a claim: it is
// kept and shown, and settles nothing — only the provider's effect check or a person does.
import type { SettledState } from "./types";

export const PROVIDER_RESPONSES = ["accepted", "rejected", "unsupported", "unreachable"] as const;
export type ProviderResponse = (typeof PROVIDER_RESPONSES)[number];

export const EFFECT_OBSERVATIONS = ["present", "absent", "unavailable"] as const;
export type EffectObservation = (typeof EFFECT_OBSERVATIONS)[number];

export const UNCERTAIN_CAUSES = [
  "cancel_unacknowledged",
  "transport_lost",
  "provider_status_unavailable",
  "target_unreachable",
  "executor_aborted",
] as const;
export type UncertainCause = (typeof UNCERTAIN_CAUSES)[number];

export interface EffectCheck {
  effect: EffectObservation;
  /**
   * The provider says the job is in a terminal state (cancelled, failed or committed), so what it
   * reports now cannot change later. "absent" without `final` is a snapshot of a job that may still
   * commit, and is not proof of absence.
   */
  final: boolean;
}

export interface SettlementFacts {
  /** The operation names a provider that Quiesce can ask (a providers row exists). */
  hasProvider: boolean;
  /** Last answer to the cancel request; null while none was recorded. */
  providerResponse: ProviderResponse | null;
  /** Latest effect check; null while none was made. */
  check: EffectCheck | null;
  /** What the executor claimed after the barrier (a late completion), if anything: never proof. */
  executorClaim: { outcome: "succeeded" | "failed" } | null;
  /** The provider's settle deadline (or the local deadline for operations without provider) has passed. */
  deadlinePassed: boolean;
}

export type SettlementVerdict =
  | { kind: "settle"; state: "completed_and_verified"; source: "provider" }
  | { kind: "settle"; state: "cancelled_without_effect" }
  | { kind: "settle"; state: "unknown"; cause: UncertainCause }
  | { kind: "retry" };

export function decideSettlement(f: SettlementFacts): SettlementVerdict {
  if (f.hasProvider && f.check?.effect === "present") return { kind: "settle", state: "completed_and_verified", source: "provider" };
  if (f.hasProvider && f.check?.effect === "absent" && f.check.final) return { kind: "settle", state: "cancelled_without_effect" };
  if (!f.deadlinePassed) return { kind: "retry" };
  return { kind: "settle", state: "unknown", cause: uncertainCause(f) };
}

/** Why the truth is not known, in the article's words. */
export function uncertainCause(f: SettlementFacts): UncertainCause {
  // Nobody can be asked: a plain tool call ran inside the agent and never reported back.
  if (!f.hasProvider) return "cancel_unacknowledged";
  const statusDown = f.check === null || f.check.effect === "unavailable";
  if (statusDown && f.providerResponse === "unreachable") return "target_unreachable";
  if (statusDown) return "provider_status_unavailable";
  // The status endpoint answered "absent" but the job never reached a terminal state.
  return "cancel_unacknowledged";
}

/** The operation's own state once its settlement is decided (the settlement keeps the detail). */
export function operationStateFor(state: SettledState): "succeeded" | "failed" | "aborted_unknown" {
  if (state === "completed_and_verified") return "succeeded";
  if (state === "cancelled_without_effect") return "failed";
  return "aborted_unknown";
}

/** Backoff between effect checks: quick at first (most providers settle fast), never past the deadline. */
export function nextCheckDelayMs(attempt: number, msUntilDeadline: number): number {
  const base = Math.min(2000, 200 * 2 ** Math.min(attempt, 4));
  return Math.max(0, Math.min(base, msUntilDeadline));
}
