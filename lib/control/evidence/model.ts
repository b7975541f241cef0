// The evidence model of a stop: from the facts of a barrier's subtree (its runs, leases, every
// operation with its state, settlement and reconciliation, acknowledgments per run, this team's late
// requests) it derives the phase, every ladder rung, the receipt decision, every count and every
// sentence a page, the API, the CLI or a download prints. Nothing here is a constant that could
// disagree with the facts: each status is a predicate over them, each sentence is built from counts.
// Pure: the caller passes `now`; see docs/evidence.md.
import { describeObservedMeaning, OBSERVED_MEANINGS, type BarrierPhase, type ObservedMeaning } from "../barrier";
import type { OperationState } from "../types";
import { recoverySentence, type RecoveryFact } from "../recovery";
import { DECISION_WORDS, RUNG_WORDS, whyUnknownWords } from "../stop-words";

/** A budget reservation of an operation: released when the work never started, kept when its outcome is unknown. */
export interface BudgetReservationFact {
  operationId: string;
  budget: string;
  unit: string;
  amount: string;
  actual: string | null;
  state: "held" | "settled" | "released";
  releaseCause: string | null;
}
import {
  deriveEnvironment,
  environmentMeaning,
  UNSUPERVISED_SENTENCE,
  type EnvironmentEvidence,
  type EnvironmentMechanism,
  type EnvironmentVerdict,
} from "./environment";

export type ReceiptDecision = "stopped_and_quiet" | "stop_incomplete";

export interface SettlementFact {
  barrierId: string;
  stateAtBarrier: string;
  cancelRequestedAt: Date | null;
  providerResponse: string | null;
  effectExpected: string | null;
  effectObserved: string | null;
  effectCheckedAt: Date | null;
  settledState: "cancelled_without_effect" | "completed_and_verified" | "unknown" | null;
  settledAt: Date | null;
  settledReason: string | null;
  attempts: number;
  lastError: string | null;
}

export interface ReconciliationFact {
  id: string;
  status: "awaiting_assignee" | "assigned" | "resolved";
  /** The owner's email (or id when the user is gone); null = nobody could be named. */
  assignee: string | null;
  assignedBy: string | null;
  assignedAt: Date | null;
  resolution: "effect_present" | "effect_absent" | null;
  evidence: string | null;
  resolvedAt: Date | null;
  /** Who resolved it, as a person's email when it was a person. */
  resolvedBy: string | null;
  cause: string | null;
}

export interface OperationFact {
  operationId: string;
  runId: string;
  tool: string;
  kind: string;
  state: OperationState;
  providerName: string | null;
  /** A providers row exists: somebody can be asked to cancel and to show the effect. */
  hasProvider: boolean;
  providerJob: string | null;
  finishedAt: Date | null;
  /** The operation's latest settlement, under whichever barrier of the tree first saw it in flight. */
  settlement: SettlementFact | null;
  reconciliation: ReconciliationFact | null;
}

export interface RunFact {
  id: string;
  lifecycle: "normal" | "paused" | "killed";
  acknowledgment: { meaning: string; at: Date } | null;
  /** The run's environment when it ran under a supervisor (docs/evidence.md#the-environment); omitted or null: unsupervised. */
  environment?: RunEnvironmentFact | null;
}

/** A supervised run's environment: how it was held, the supervisor's evidence after the stop, and the owner of an unknown. */
export interface RunEnvironmentFact {
  mechanism: EnvironmentMechanism;
  weakest: boolean;
  supervisedAt: Date;
  /** The supervisor's latest report after a stop; null while none arrived. */
  evidence: EnvironmentEvidence | null;
  evidenceAt: Date | null;
  /** Since when nobody could verify it empty (set with the receipt that first said so), and who owns that. */
  unknownSince: Date | null;
  owner: string | null;
  /** A person's check that closed an unknown environment (docs/design/environment-evidence.md). */
  resolvedBy?: string | null;
  resolvedAt?: Date | null;
  resolutionEvidence?: string | null;
}

export interface EffectReceiptFact {
  operationId: string;
  providerOperationId: string | null;
  committedAt: Date;
  rollbackOwner: string | null;
  source: string;
  detail: unknown;
}

/** What a holder reported about an operation after the stop: kept, shown, never a settlement. */
export interface ClaimFact {
  operationId: string;
  outcome: string;
  providerOperationId: string | null;
  reportedBy: string;
  claimedAt: Date;
}

export interface EvidenceFacts {
  now: Date;
  barrier: {
    id: string;
    runId: string;
    requestedAt: Date;
    requestedBy: string;
    reason: string;
    newEpoch: number;
    /** The engine's own step (revoking → settling → quiet → complete), as stored. */
    enginePhase: BarrierPhase;
    dispatchStoppedAt: Date | null;
    queuedCancelledAt: Date | null;
    runsKilled: number;
    leasesRevoked: number;
    queuedCancelled: number;
    scheduledCancelled: number;
    retriesCancelled: number;
    quietPeriodSeconds: number | null;
    quietUntil: Date | null;
  };
  /** Every run of the subtree, the barrier's run first. */
  runs: RunFact[];
  leases: { rootLease: "revoked" | "active" | "none"; descendantLeasesRevoked: number; active: number };
  currentEpoch: number;
  /** Every operation of the subtree. */
  operations: OperationFact[];
  effectReceipts: EffectReceiptFact[];
  /** Claims the executors made after the stop (none when omitted). */
  claims?: ClaimFact[];
  /** Recovery items of the subtree's completed effects (docs/evidence.md#recovery; none when omitted). */
  recoveries?: RecoveryFact[];
  /** Budget reservations of the subtree's operations (docs/policies.md#budgets; none when omitted). */
  budgetReservations?: BudgetReservationFact[];
  /** Denied requests of THIS team about runs of the subtree since the stop was requested. */
  lateRequestsDenied: number;
  receipts: { version: number; decision: ReceiptDecision; digest: string; verifiedAt: Date }[];
}

export type OutcomeClass =
  | "pending" // queued, scheduled or running: not terminal
  | "unknown" // aborted_unknown: nobody can say whether the effect happened
  | "effect_present"
  | "effect_absent"
  | "not_started"; // cancelled before it started, or denied

export type SettledBy = "provider" | "executor" | "person" | null;

export interface OperationEvidence {
  op: OperationFact;
  outcome: OutcomeClass;
  /** Was it in flight when a barrier of the tree came (it has a settlement), or did its outcome become unknown? */
  inFlight: boolean;
  settledBy: SettledBy;
  settledAt: Date | null;
}

const NOT_TERMINAL = new Set<OperationState>(["queued", "scheduled", "running"]);

export function classify(op: OperationFact): OperationEvidence {
  const s = op.settlement;
  const r = op.reconciliation;
  const outcome: OutcomeClass = NOT_TERMINAL.has(op.state)
    ? "pending"
    : op.state === "aborted_unknown"
      ? "unknown"
      : op.state === "succeeded"
        ? "effect_present"
        : op.state === "failed"
          ? "effect_absent"
          : "not_started";
  const inFlight = s !== null || op.state === "aborted_unknown" || r !== null || op.state === "running";
  let settledBy: SettledBy = null;
  let settledAt: Date | null = null;
  if (outcome === "effect_present" || outcome === "effect_absent") {
    if (r?.status === "resolved") {
      settledBy = "person";
      settledAt = r.resolvedAt;
    } else if (s?.settledState && s.settledState !== "unknown") {
      // The provider settled it only when there is one and it answered an effect check (present, or
      // absent in a final state); a late report or an executor's receipt is the executor's word.
      const providerAnswered = op.hasProvider && (s.effectObserved === "present" || s.effectObserved === "absent");
      const byExecutor = !providerAnswered || /^late effect|\(executor\)/.test(s.settledReason ?? "");
      settledBy = byExecutor ? "executor" : "provider";
      settledAt = s.settledAt;
    } else {
      settledBy = "executor";
      settledAt = op.finishedAt;
    }
  }
  return { op, outcome, inFlight, settledBy, settledAt };
}

export const RUNG_IDS = [
  "cancellation_requested",
  "observed_by_target",
  "new_work_prevented",
  "queued_work_cancelled",
  "execution_quiesced",
  "environment_terminated",
  "effects_settled",
  "receipt_issued",
] as const;
export type RungId = (typeof RUNG_IDS)[number];
export type RungStatus = "done" | "pending" | "uncertain";

export interface Rung {
  id: RungId;
  label: string;
  stopState: "generation_stopped" | "dispatch_stopped" | "queued_work_cancelled" | "effects_settled" | null;
  status: RungStatus;
  at: string | null;
  /** One sentence that says what the facts show, and no more. */
  detail: string;
  evidence: Record<string, unknown>;
}

export interface Counts {
  runs: number;
  runsObserved: number;
  runsKilled: number;
  activeLeases: number;
  operations: number;
  inFlight: number;
  pending: number;
  unknown: number;
  queuedLeft: number;
  completedAndVerified: number;
  cancelledWithoutEffect: number;
  settledByProvider: number;
  settledByExecutor: number;
  reconciledByPerson: number;
  openReconciliations: number;
  unownedReconciliations: number;
  queuedCancelled: number;
  scheduledCancelled: number;
  retriesCancelled: number;
  lateRequestsDenied: number;
  /** Runs started under a supervisor, those verified empty after the stop, and those whose environment is unknown. */
  supervisedRuns: number;
  environmentsVerified: number;
  environmentsUnknown: number;
}

export interface Evidence {
  phase: BarrierPhase;
  decision: ReceiptDecision;
  quietElapsed: boolean;
  counts: Counts;
  operations: OperationEvidence[];
  ladder: Rung[];
  /** The receipt's and the page's summary, sentence by sentence. */
  sentences: string[];
  observedMeaning: ObservedMeaning | null;
  lastSettledAt: Date | null;
  quiescedAt: Date | null;
  /** The environment rule's verdict over the subtree's runs (docs/evidence.md#the-environment). */
  environment: EnvironmentVerdict;
}

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;
const iso = (d: Date | null | undefined) => (d ? d.toISOString() : null);
const maxDate = (ds: (Date | null | undefined)[]): Date | null => {
  const ts = ds.filter((d): d is Date => !!d).map((d) => d.getTime());
  return ts.length ? new Date(Math.max(...ts)) : null;
};
/** Minutes precision, UTC: how a person reads "when". */
export const when = (d: Date) => `${d.toISOString().slice(0, 16).replace("T", " ")} UTC`;

/** The weakest acknowledgment of the subtree: the whole subtree is observed no further than that. */
function weakest(meanings: string[]): ObservedMeaning | null {
  let w: number | null = null;
  for (const m of meanings) {
    const i = OBSERVED_MEANINGS.indexOf(m as ObservedMeaning);
    const rank = i < 0 ? 0 : i;
    w = w === null ? rank : Math.min(w, rank);
  }
  return w === null ? null : OBSERVED_MEANINGS[w]!;
}

/** The completion rule over the whole subtree; `environmentAllowsQuiet`: every supervised run verified empty. */
export function decide(
  c: Pick<Counts, "pending" | "unknown" | "openReconciliations" | "activeLeases">,
  quietElapsed: boolean,
  environmentAllowsQuiet = true,
): ReceiptDecision {
  return c.pending === 0 && c.unknown === 0 && c.openReconciliations === 0 && c.activeLeases === 0 && quietElapsed && environmentAllowsQuiet
    ? "stopped_and_quiet"
    : "stop_incomplete";
}

/** The environment facts the pure rule reads: a run is supervised when it was marked so, or its supervisor reported. */
export function environmentOf(f: Pick<EvidenceFacts, "runs">, quietElapsed: boolean): EnvironmentVerdict {
  return deriveEnvironment(
    f.runs.map((r) => ({
      runId: r.id,
      supervised: !!r.environment,
      evidence: r.environment?.evidence ?? null,
      attested:
        r.environment?.resolvedBy && r.environment.resolvedAt
          ? { by: r.environment.resolvedBy, at: r.environment.resolvedAt.toISOString(), evidence: r.environment.resolutionEvidence ?? "" }
          : null,
    })),
    quietElapsed,
    when,
  );
}

export function deriveEvidence(f: EvidenceFacts): Evidence {
  const ops = f.operations.map(classify);
  const b = f.barrier;
  const count = (p: (o: OperationEvidence) => boolean) => ops.filter(p).length;
  const openRecs = ops.filter((o) => o.op.reconciliation && o.op.reconciliation.status !== "resolved");
  const counts: Counts = {
    runs: f.runs.length,
    runsObserved: f.runs.filter((r) => r.acknowledgment).length,
    runsKilled: f.runs.filter((r) => r.lifecycle === "killed").length,
    activeLeases: f.leases.active,
    operations: ops.length,
    inFlight: count((o) => o.inFlight),
    pending: count((o) => o.outcome === "pending"),
    unknown: count((o) => o.outcome === "unknown"),
    queuedLeft: count((o) => o.op.state === "queued" || o.op.state === "scheduled"),
    completedAndVerified: count((o) => o.inFlight && o.outcome === "effect_present"),
    cancelledWithoutEffect: count((o) => o.inFlight && o.outcome === "effect_absent"),
    settledByProvider: count((o) => o.inFlight && o.settledBy === "provider"),
    settledByExecutor: count((o) => o.inFlight && o.settledBy === "executor"),
    reconciledByPerson: count((o) => o.settledBy === "person"),
    openReconciliations: openRecs.length,
    unownedReconciliations: openRecs.filter((o) => !o.op.reconciliation!.assignee).length,
    queuedCancelled: b.queuedCancelled,
    scheduledCancelled: b.scheduledCancelled,
    retriesCancelled: b.retriesCancelled,
    lateRequestsDenied: f.lateRequestsDenied,
    supervisedRuns: 0,
    environmentsVerified: 0,
    environmentsUnknown: 0,
  };
  const quietElapsed = b.quietUntil !== null && f.now.getTime() >= b.quietUntil.getTime();
  const env = environmentOf(f, quietElapsed);
  const supervisedRuns = f.runs.filter((r) => r.environment);
  counts.supervisedRuns = supervisedRuns.length;
  counts.environmentsVerified = supervisedRuns.filter(
    (r) => r.environment!.evidence && environmentMeaning(r.environment!.evidence) === "process_terminated",
  ).length;
  counts.environmentsUnknown = env.unknownRuns.length;
  const decision = decide(counts, quietElapsed, env.allowsQuiet);
  const latest = f.receipts.at(-1) ?? null;
  const phase: BarrierPhase =
    b.enginePhase === "revoking"
      ? "revoking"
      : counts.pending > 0
        ? "settling"
        : b.enginePhase === "complete" && latest
          ? "complete"
          : "quiet";
  const inFlightOps = ops.filter((o) => o.inFlight);
  const lastSettledAt = maxDate(inFlightOps.map((o) => o.settledAt ?? o.op.settlement?.settledAt ?? null));
  const quiescedAt = counts.pending === 0 && counts.unknown === 0 ? (lastSettledAt ?? b.dispatchStoppedAt) : null;
  const finished = phase === "complete";
  const observedMeaning =
    counts.runsObserved === counts.runs && counts.runs > 0 ? weakest(f.runs.map((r) => r.acknowledgment!.meaning)) : null;

  // --- sentences ----------------------------------------------------------------------------
  const settledParts: string[] = [];
  if (counts.settledByProvider)
    settledParts.push(`${counts.settledByProvider} settled by ${counts.settledByProvider === 1 ? "its provider" : "their providers"}`);
  if (counts.settledByExecutor)
    settledParts.push(`${counts.settledByExecutor} reported by ${counts.settledByExecutor === 1 ? "its executor" : "their executors"}`);
  for (const o of ops.filter((x) => x.settledBy === "person")) {
    const r = o.op.reconciliation!;
    settledParts.push(
      `1 reconciled by ${r.resolvedBy ?? "a person"} on ${r.resolvedAt ? when(r.resolvedAt) : "an unrecorded date"} (${r.resolution === "effect_present" ? "effect present" : "effect absent"})`,
    );
  }
  const unknownParts = ops
    .filter((o) => o.outcome === "unknown")
    .map((o) => {
      const r = o.op.reconciliation;
      const owner = r?.assignee ? `owned by ${r.assignee}` : "with no owner (the team has no admin to name)";
      return `${o.op.operationId} unknown — ${unknownWhy(o.op)}; ${owner}`;
    });
  const effectsDetail =
    inFlightOps.length === 0
      ? "nothing was in flight anywhere in the subtree"
      : [
          `${plural(inFlightOps.length, "call")} in flight across the subtree`,
          settledParts.length ? settledParts.join(", ") : null,
          counts.pending ? `${counts.pending} still being settled` : null,
          unknownParts.length ? `${plural(counts.unknown, "outcome")} unknown` : null,
        ]
          .filter(Boolean)
          .join("; ");
  const sentences: string[] = [];
  sentences.push(`Stop requested by ${b.requestedBy} at ${when(b.requestedAt)}: “${b.reason}”.`);
  sentences.push(
    counts.runsKilled === counts.runs && counts.activeLeases === 0
      ? `${plural(counts.runs, "run")} killed and no lease is active: every gate denies new work.`
      : `${counts.runsKilled} of ${plural(counts.runs, "run")} killed, ${plural(counts.activeLeases, "lease")} still active.`,
  );
  sentences.push(`${effectsDetail}.`);
  for (const u of unknownParts) sentences.push(`${u}.`);
  const claims = f.claims ?? [];
  if (claims.length > 0)
    sentences.push(
      `${plural(claims.length, "claim")} reported after the stop, not verified (a claim settles nothing): ${claims
        .map((c) => `${c.operationId} ${c.outcome} by ${c.reportedBy} at ${when(c.claimedAt)}`)
        .join("; ")}.`,
    );
  const recovery = recoverySentence(f.recoveries ?? []);
  if (recovery) sentences.push(recovery);
  if (counts.unknown === 0 && counts.pending === 0) {
    const present = count((o) => o.outcome === "effect_present" && o.inFlight);
    if (!recovery)
      sentences.push(
        present === 0
          ? "No in-flight effect completed: nothing to roll back."
          : `${plural(present, "effect")} completed and must be rolled back by its owner if unwanted.`,
      );
  } else {
    sentences.push("Whether every effect was undone is not known yet: nothing is claimed about rollback.");
  }
  // The environment (docs/evidence.md#the-environment): a line per supervised run, the unsupervised counted.
  const ownerOf = new Map(supervisedRuns.map((r) => [r.id, r.environment!.owner]));
  const unknownEnv = new Set(env.unknownRuns.map((u) => u.runId));
  for (const line of env.sentences) {
    if (line.endsWith(UNSUPERVISED_SENTENCE)) continue;
    const runId = line.slice(0, line.indexOf(":"));
    const owner = unknownEnv.has(runId) ? (ownerOf.get(runId) ? `; owned by ${ownerOf.get(runId)}` : "; no owner named yet") : "";
    sentences.push(`${line}${owner}.`);
  }
  const unsupervised = counts.runs - counts.supervisedRuns;
  if (unsupervised > 0)
    sentences.push(
      counts.supervisedRuns === 0
        ? `Environment not observed: ${counts.runs === 1 ? "this run" : `none of the ${counts.runs} runs`} had a supervisor; nothing is claimed about ${counts.runs === 1 ? "its" : "their"} processes.`
        : `Environment not observed for ${plural(unsupervised, "run")} without a supervisor; nothing is claimed about ${unsupervised === 1 ? "its" : "their"} processes.`,
    );
  sentences.push(
    b.quietUntil === null
      ? "The quiet period has not started."
      : quietElapsed
        ? `The quiet period of ${b.quietPeriodSeconds ?? 0} s ended at ${when(b.quietUntil)}.`
        : `The quiet period runs until ${when(b.quietUntil)}.`,
  );
  sentences.push(`${plural(counts.lateRequestsDenied, "late request")} denied since the stop.`);
  sentences.push(
    decision === "stopped_and_quiet"
      ? `${DECISION_WORDS.stopped_and_quiet}: nothing in flight, every outcome known, no authority left.`
      : `${DECISION_WORDS.stop_incomplete}: ${[
          counts.pending ? `${counts.pending} in flight` : null,
          counts.unknown ? `${counts.unknown} unknown` : null,
          counts.openReconciliations && !counts.unknown ? `${counts.openReconciliations} open reconciliations` : null,
          counts.activeLeases ? `${counts.activeLeases} active leases` : null,
          counts.environmentsUnknown ? `${plural(counts.environmentsUnknown, "environment")} unknown` : null,
          !quietElapsed ? "quiet period not over" : null,
        ]
          .filter(Boolean)
          .join(", ")}.`,
  );

  // --- ladder -------------------------------------------------------------------------------
  const waiting = (done: boolean): RungStatus => (done ? "done" : finished ? "uncertain" : "pending");
  // A step the engine stamps when it completes: done from that time on, pending until then.
  const stamped = (done: boolean, at: Date | null): { status: RungStatus; at: string | null } =>
    done ? { status: "done", at: iso(at) } : { status: "pending", at: null };
  const allObserved = observedMeaning !== null;
  const authorityGone = b.dispatchStoppedAt !== null && counts.runsKilled === counts.runs && counts.activeLeases === 0;
  const queuedGone = b.queuedCancelledAt !== null && counts.queuedLeft === 0;
  const quiesced = counts.pending === 0 && counts.unknown === 0;
  const settled = quiesced && counts.openReconciliations === 0 && quietElapsed;
  const cancelledTotal = b.queuedCancelled + b.scheduledCancelled + b.retriesCancelled;
  const perRun = f.runs.map((r) => ({ run_id: r.id, meaning: r.acknowledgment?.meaning ?? null, at: iso(r.acknowledgment?.at) }));
  const ladder: Rung[] = [
    {
      id: "cancellation_requested",
      label: RUNG_WORDS.cancellation_requested,
      stopState: null,
      status: "done",
      at: iso(b.requestedAt),
      detail: `by ${b.requestedBy}: “${b.reason}”`,
      evidence: { requested_by: b.requestedBy, reason: b.reason },
    },
    {
      id: "observed_by_target",
      label: RUNG_WORDS.observed_by_target,
      stopState: "generation_stopped",
      status: waiting(allObserved),
      at: allObserved ? iso(maxDate(f.runs.map((r) => r.acknowledgment?.at))) : null,
      detail: allObserved
        ? `every run acknowledged (${plural(counts.runs, "run")}); the weakest says ${observedMeaning!.replaceAll("_", " ")} — ${describeObservedMeaning(observedMeaning!)}`
        : finished
          ? // Not proven, and the stop does not rest on it: a decision never reads acknowledgments.
            `${counts.runsObserved} of ${plural(counts.runs, "run")} acknowledged: nothing shows the target saw the stop; the stop does not rest on it, authority was revoked at every gate`
          : `${counts.runsObserved} of ${plural(counts.runs, "run")} acknowledged so far: a requested stop is not proof the target stopped`,
      evidence: { runs: perRun, observed: counts.runsObserved, of: counts.runs },
    },
    {
      id: "new_work_prevented",
      label: RUNG_WORDS.new_work_prevented,
      stopState: "dispatch_stopped",
      ...stamped(authorityGone, b.dispatchStoppedAt),
      detail: authorityGone
        ? `${plural(counts.runs, "run")} killed, leases revoked, epoch raised to ${b.newEpoch}: every gate now denies`
        : `revoking authority: ${counts.runsKilled} of ${plural(counts.runs, "run")} killed, ${plural(counts.activeLeases, "lease")} active`,
      evidence: {
        runs_killed: counts.runsKilled,
        runs: counts.runs,
        leases_revoked: b.leasesRevoked,
        active_leases: counts.activeLeases,
        new_epoch: b.newEpoch,
        late_requests_denied: counts.lateRequestsDenied,
      },
    },
    {
      id: "queued_work_cancelled",
      label: RUNG_WORDS.queued_work_cancelled,
      stopState: "queued_work_cancelled",
      ...stamped(queuedGone, b.queuedCancelledAt),
      detail: queuedGone
        ? `${plural(b.queuedCancelled, "queued job")}, ${plural(b.scheduledCancelled, "scheduled job")}, ${plural(b.retriesCancelled, "retry", "retries")} cancelled and kept${cancelledTotal === 0 ? " (nothing was queued)" : ""}`
        : `${plural(counts.queuedLeft, "queued or scheduled operation")} not cancelled yet`,
      evidence: {
        queued_cancelled: b.queuedCancelled,
        scheduled_cancelled: b.scheduledCancelled,
        retries_cancelled: b.retriesCancelled,
        still_queued: counts.queuedLeft,
      },
    },
    {
      id: "execution_quiesced",
      label: RUNG_WORDS.execution_quiesced,
      stopState: null,
      status: quiesced ? "done" : counts.pending === 0 ? "uncertain" : "pending",
      at: iso(quiescedAt),
      detail: quiesced
        ? inFlightOps.length === 0
          ? "nothing was in flight"
          : `every in-flight call ended: ${settledParts.join(", ")}`
        : counts.pending > 0
          ? `${plural(counts.pending, "call")} still in flight or being settled`
          : `${plural(counts.unknown, "call")} may still be running: outcome unknown`,
      evidence: {
        in_flight: inFlightOps.length,
        pending: counts.pending,
        unknown: counts.unknown,
        settled_by_provider: counts.settledByProvider,
        reported_by_executor: counts.settledByExecutor,
        reconciled_by_person: counts.reconciledByPerson,
      },
    },
    ...(counts.supervisedRuns > 0 ? [environmentRung(f, env, counts, finished)] : []),
    {
      id: "effects_settled",
      label: RUNG_WORDS.effects_settled,
      stopState: "effects_settled",
      status: settled ? "done" : counts.unknown > 0 || counts.openReconciliations > 0 ? "uncertain" : "pending",
      at: settled ? iso(b.quietUntil) : null,
      detail: settled
        ? `${effectsDetail}; quiet period over`
        : counts.unknown > 0
          ? `${plural(counts.unknown, "outcome")} unknown: ${unknownParts.join("; ")}`
          : counts.pending > 0
            ? `${counts.pending} still being settled`
            : b.quietUntil
              ? `quiet period running until ${when(b.quietUntil)}: late requests are denied and recorded`
              : "waiting for the quiet period",
      evidence: {
        cancelled_without_effect: counts.cancelledWithoutEffect,
        completed_and_verified: counts.completedAndVerified,
        unknown: counts.unknown,
        open_reconciliations: counts.openReconciliations,
        reconciliation_holders: openRecs.map((o) => o.op.reconciliation!.assignee ?? "no owner"),
        quiet_until: iso(b.quietUntil),
        quiet_elapsed: quietElapsed,
      },
    },
    {
      id: "receipt_issued",
      label: RUNG_WORDS.receipt_issued,
      stopState: null,
      status: latest ? "done" : "pending",
      at: iso(latest?.verifiedAt),
      detail: latest ? `version ${latest.version}: ${DECISION_WORDS[latest.decision]}` : "issued when the quiet period ends",
      evidence: latest ? { version: latest.version, decision: latest.decision, digest: latest.digest } : {},
    },
  ];
  return {
    phase,
    decision,
    quietElapsed,
    counts,
    operations: ops,
    ladder,
    sentences,
    observedMeaning,
    lastSettledAt,
    quiescedAt,
    environment: env,
  };
}

/**
 * The environment rung, on the ladder only when a run of the subtree was supervised (an unsupervised
 * subtree claims nothing about processes, so it has no rung that could read "done"): done exactly when
 * every supervised run's supervisor reported its container verified empty.
 */
function environmentRung(f: EvidenceFacts, env: EnvironmentVerdict, counts: Counts, finished: boolean): Rung {
  const supervised = f.runs.filter((r) => r.environment);
  const done = env.status === "done";
  const ended = supervised.reduce((n, r) => n + (r.environment!.evidence?.processes.length ?? 0), 0);
  const emptied = maxDate(supervised.map((r) => (r.environment!.evidence?.emptyAt ? new Date(r.environment!.evidence.emptyAt) : null)));
  const unsupervised = counts.runs - counts.supervisedRuns;
  const rest = unsupervised > 0 ? `; ${plural(unsupervised, "run")} without a supervisor: nothing claimed` : "";
  return {
    id: "environment_terminated",
    label: RUNG_WORDS.environment_terminated,
    stopState: null,
    status: done ? "done" : env.status === "uncertain" || finished ? "uncertain" : "pending",
    at: done ? iso(emptied) : null,
    detail: done
      ? `${plural(counts.supervisedRuns, "supervised run")}: ${plural(ended, "process", "processes")} ended, every container verified empty${rest}`
      : env.status === "uncertain"
        ? `${plural(counts.environmentsUnknown, "environment")} unknown: ${env.unknownRuns.map((u) => `${u.runId} (${u.why})`).join("; ")}${rest}`
        : `${counts.environmentsVerified} of ${plural(counts.supervisedRuns, "supervised run")} verified empty; waiting for the supervisors' reports${rest}`,
    evidence: {
      supervised_runs: counts.supervisedRuns,
      verified_empty: counts.environmentsVerified,
      unknown: counts.environmentsUnknown,
      runs: supervised.map((r) => ({
        run_id: r.id,
        mechanism: r.environment!.mechanism,
        weakest: r.environment!.weakest,
        emptied_at: r.environment!.evidence?.emptyAt ?? null,
        processes: r.environment!.evidence?.processes.length ?? null,
        survivors: r.environment!.evidence?.survivors ?? null,
      })),
    },
  };
}

/** Why an outcome is unknown, in words a reviewer can check against the evidence. */
export function unknownWhy(op: OperationFact): string {
  return whyUnknownWords({
    settled: op.settlement !== null,
    hasProvider: op.hasProvider,
    providerResponse: op.settlement?.providerResponse ?? null,
    cause: op.reconciliation?.cause ?? null,
  });
}
