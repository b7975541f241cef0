// The console's words for a stop: its states (the one vocabulary every page and every evidence sentence uses,
// docs/console.md#one-vocabulary) and a fleet-stop filter as a sentence a person can repeat
// (docs/fleet-stop.md#stops-in-the-console). Pure; the snake_case values stay in downloads.
import type { Harness, OperationState, SettledState } from "./types";
import type { BarrierPhase } from "./barrier";
import type { ReconciliationStatus } from "./reconciliation";
import type { UncertainCause } from "./settlement";
import type { RunStatus } from "./fleet";

export const HARNESS_WORDS: Record<Harness, string> = { claude_code: "Claude Code", codex: "Codex", mcp: "MCP", custom: "custom" };

export interface StopFilterLike {
  harness?: readonly Harness[];
  agent?: readonly string[];
  taskPrefix?: string;
  createdAfter?: string;
  createdBefore?: string;
  status?: readonly RunStatus[];
  runIds?: readonly string[];
}

/** "a or b" / "a, b or c" */
function or(items: readonly string[]): string {
  if (items.length <= 1) return items[0] ?? "";
  return `${items.slice(0, -1).join(", ")} or ${items[items.length - 1]}`;
}

/**
 * The filter in words: "harness is Claude Code and task starts with `release-`". `{}` is "every run of
 * the team". Times are ISO 8601 UTC (the page shows the filter; the reader's zone is for the stop's time).
 */
export function stopFilterWords(f: StopFilterLike): string {
  const parts: string[] = [];
  if (f.runIds?.length) parts.push(f.runIds.length === 1 ? `run ${f.runIds[0]}` : `${f.runIds.length} runs named by id`);
  if (f.harness?.length) parts.push(`harness is ${or(f.harness.map((h) => HARNESS_WORDS[h]))}`);
  if (f.agent?.length) parts.push(`agent is ${or(f.agent.map((a) => `\`${a}\``))}`);
  if (f.taskPrefix) parts.push(`task starts with \`${f.taskPrefix}\``);
  if (f.status?.length) parts.push(`status is ${or(f.status)}`);
  if (f.createdAfter) parts.push(`created at or after ${f.createdAfter}`);
  if (f.createdBefore) parts.push(`created before ${f.createdBefore}`);
  return parts.length === 0 ? "every run of the team" : parts.join(" and ");
}

// --- one vocabulary for a stop's states (docs/console.md#one-vocabulary) ---------------------------------
// Every page, and every sentence the evidence model writes, names a barrier's phase, a receipt's decision,
// a ladder rung and its status, a settled state, an operation's state and a reconciliation's status with
// these words; the snake_case values stay in downloads and the API.

/** The barrier's phase. "complete" is said as what it means (a receipt exists), never beside "incomplete". */
export const PHASE_WORDS: Record<BarrierPhase, string> = {
  revoking: "Revoking authority",
  settling: "Settling in-flight calls",
  quiet: "Waiting out the quiet period",
  complete: "Receipt issued",
};

export const DECISION_WORDS: Record<"stopped_and_quiet" | "stop_incomplete", string> = {
  stopped_and_quiet: "Stopped and quiet",
  stop_incomplete: "Not yet quiet",
};

/** The rungs of the stop ladder, in their order on the page. */
export const RUNG_WORDS = {
  cancellation_requested: "Cancellation requested",
  observed_by_target: "Observed by target",
  new_work_prevented: "New work prevented",
  queued_work_cancelled: "Queued work cancelled",
  execution_quiesced: "Execution quiesced",
  environment_terminated: "Environment terminated",
  effects_settled: "Effects settled / evidence reconciled",
  receipt_issued: "Receipt issued",
} as const;

/** A rung's status: "not proven" is what the facts cannot show, which is not the same as "the stop failed". */
export const RUNG_STATUS_WORDS: Record<"done" | "pending" | "uncertain", string> = {
  done: "Done",
  pending: "In progress",
  uncertain: "Not proven",
};

/** How an in-flight call settled; null is "still settling". */
export const SETTLED_WORDS: Record<SettledState, string> = {
  cancelled_without_effect: "Cancelled, no effect",
  completed_and_verified: "Completed, verified",
  unknown: "Outcome unknown",
};
export const SETTLING_WORD = "Settling";

/** An operation's state; an aborted call whose effect nobody can prove is the same "outcome unknown" a settlement says. */
export const OPERATION_STATE_WORDS: Record<OperationState, string> = {
  queued: "Queued",
  scheduled: "Scheduled",
  running: "Running",
  succeeded: "Succeeded",
  failed: "Failed",
  cancelled_not_started: "Cancelled before it started",
  denied: "Denied",
  aborted_unknown: "Outcome unknown",
};

export const RECONCILIATION_STATUS_WORDS: Record<ReconciliationStatus, string> = {
  awaiting_assignee: "Needs an owner",
  assigned: "Assigned",
  resolved: "Resolved",
};

export const RESOLUTION_WORDS: Record<"effect_present" | "effect_absent", string> = {
  effect_present: "Effect present",
  effect_absent: "Effect absent",
};

/** What is known about an unknown outcome, the facts the barrier and the reconciliation queue both have. */
export interface UnknownFacts {
  /** A barrier's settlement exists for the call (it was in flight when a stop came). */
  settled: boolean;
  /** A provider Quiesce can ask is configured for it. */
  hasProvider: boolean;
  providerResponse: string | null;
  /** The uncertain interval's cause. */
  cause: string | null;
}

/** Why the truth is not known (an uncertain interval's cause, an operation's state reason), as a clause. */
export const CAUSE_WORDS: Record<UncertainCause, string> = {
  cancel_unacknowledged: "its cancel was never acknowledged",
  transport_lost: "its report was lost in transport",
  executor_aborted: "its executor aborted the call",
  target_unreachable: "its target was unreachable",
  provider_status_unavailable: "its provider's status was unavailable",
};

/** Why an outcome is unknown, in words a reviewer can check against the evidence: one sentence for the barrier and the queue. */
export function whyUnknownWords(f: UnknownFacts): string {
  if (!f.settled) {
    // The default cause says nothing the sentence does not; a named one is kept.
    const said = f.cause && f.cause !== "cancel_unacknowledged" ? wordFor(CAUSE_WORDS, f.cause) : undefined;
    return `its executor gave up on the call and could not say whether it took effect${said ? ` (${said})` : ""}`;
  }
  if (!f.hasProvider) return "no provider to ask, and its executor never reported";
  if (f.providerResponse === "unreachable" || f.cause === "target_unreachable") return "its provider was unreachable";
  if (f.cause === "provider_status_unavailable") return "its provider's status was unavailable";
  return "its provider never confirmed the cancellation";
}

/** A state's words from one of the sets above; a value from a newer server than the set reads as words, not snake_case. */
export function wordFor(words: Readonly<Record<string, string>>, value: string): string {
  return Object.hasOwn(words, value) ? words[value]! : value.replaceAll("_", " ");
}

/** A barrier's headline: the receipt's decision once the barrier has one, else the phase it is in (never "complete" beside "incomplete"). */
export function barrierHeading(phase: string, decision: keyof typeof DECISION_WORDS | null): string {
  return phase === "complete" && decision ? DECISION_WORDS[decision] : `Stopping: ${wordFor(PHASE_WORDS, phase).toLowerCase()}…`;
}

/** A receipt body's fields whose values are states, with the words for them (the page shows the word beside the value as written). */
export const FIELD_STATE_WORDS: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  decision: DECISION_WORDS,
  settled_state: { ...SETTLED_WORDS, pending: SETTLING_WORD },
  state_at_barrier: OPERATION_STATE_WORDS,
  status: RECONCILIATION_STATUS_WORDS,
  resolution: RESOLUTION_WORDS,
  observed_by_target: RUNG_STATUS_WORDS,
};

/** An operation's state reason: an uncertain cause, or the settled state a barrier gave it. */
export const STATE_REASON_WORDS: Readonly<Record<string, string>> = { ...CAUSE_WORDS, ...SETTLED_WORDS };
