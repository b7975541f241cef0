// The drill cases (no process control needed) and the runner shared by `quiesce drill` and
// `npm run evals`. Cases run one after another: each is a small incident of its own.
import type { CaseDef, CaseResult, DrillCase, DrillContext, Need } from "./types";
import { queuedCallStartsAfterParentRevocation } from "./cases/queued-call-after-parent-revocation";
import { providerCommitsDuringCancelRequest } from "./cases/provider-commits-during-cancel";
import { delayedRetryFiresAfterRevocation } from "./cases/delayed-retry-after-revocation";
import { providerStatusUnavailable } from "./cases/provider-status-unavailable";
import { childRunMissesParentNotification } from "./cases/child-run-misses-parent-notification";
import { pauseFromAnotherProcess } from "./cases/pause-from-another-process";
import { killWithFullQueue } from "./cases/kill-with-full-queue";
import { resumeReEvaluated } from "./cases/resume-re-evaluated";
import { killDuringLongCall } from "./cases/kill-during-long-call";
import { unauthorizedInterrupt } from "./cases/unauthorized-interrupt";
import { missingControlRow } from "./cases/missing-control-row";
import { cancellationRequestedNoAck } from "./cases/cancellation-requested-no-ack";
import { approvedArtifactHandoff } from "./cases/approved-artifact-handoff";
import { sideEffectCompletedBeforeStop } from "./cases/side-effect-completed-before-stop";
import { fleetStopDuringCreation } from "./cases/fleet-stop-during-creation";
import { lateReportFromStranger } from "./cases/late-report-from-stranger";
import { finishDoesNotEscapeFleetKill } from "./cases/finish-does-not-escape-fleet-kill";
import { completedEffectRolledBackAndVerified } from "./cases/completed-effect-rolled-back";
import { compensationAcceptedButNotDone } from "./cases/compensation-accepted-not-done";
import { restartBlockedByOpenRecovery, restartReplaysLedgerAlreadyApplied } from "./cases/restart-ledger";
import { unsupervisedRunClaimsNothing } from "./cases/unsupervised-run-claims-nothing";

export * from "./types";

/** In the articles' order: the barrier article's (docs/ideas.md#barriers) six evals, the control article's
 * (docs/ideas.md#control-state) checks, the stop article's (docs/ideas.md#five-questions) failure
 * behaviours. */
export const DRILL_CASES: DrillCase[] = [
  queuedCallStartsAfterParentRevocation,
  providerCommitsDuringCancelRequest,
  delayedRetryFiresAfterRevocation,
  providerStatusUnavailable,
  childRunMissesParentNotification,
  pauseFromAnotherProcess,
  killWithFullQueue,
  resumeReEvaluated,
  killDuringLongCall,
  unauthorizedInterrupt,
  missingControlRow,
  cancellationRequestedNoAck,
  approvedArtifactHandoff,
  sideEffectCompletedBeforeStop,
  // docs/fleet-stop.md — one scope stops a fleet, including runs created during the stop
  fleetStopDuringCreation,
  // docs/security/authorization.md#holders — the rules of evidence inside a team
  lateReportFromStranger,
  finishDoesNotEscapeFleetKill,
  // docs/evidence.md#recovery — a completed effect is undone only on the provider's word
  completedEffectRolledBackAndVerified,
  compensationAcceptedButNotDone,
  restartBlockedByOpenRecovery,
  restartReplaysLedgerAlreadyApplied,
  // docs/evidence.md#the-environment — a run without a supervisor is claimed nothing about
  unsupervisedRunClaimsNothing,
];

/** Which of a case's needs the context cannot meet. */
export function missingNeeds(
  needs: Need[],
  ctx: Pick<DrillContext, "agent" | "worker" | "pod" | "sim" | "viewer" | "otherTeam" | "stranger">,
): Need[] {
  return needs.filter((n) => {
    if (n === "agent") return !ctx.agent || !ctx.worker || !ctx.pod;
    if (n === "sim") return !ctx.sim;
    if (n === "viewer") return !ctx.viewer;
    if (n === "stranger") return !ctx.stranger;
    return !ctx.otherTeam;
  });
}

const NEED_TEXT: Record<Need, string> = {
  agent: "an agent key (--agent-key)",
  sim: "the simulated provider (--sim-url)",
  viewer: "a viewer's operator key",
  otherTeam: "another team's operator key",
  stranger: "a second machine key of the team (--stranger-key)",
};

/**
 * Runs one case and never throws: a thrown error is the case's result ("error"), a missing need is
 * "skip", otherwise pass iff the observed label is the expected one and every check holds.
 */
export async function runCase<C>(c: CaseDef<C>, ctx: C, missing: Need[] = []): Promise<CaseResult> {
  const t0 = Date.now();
  const base = { name: c.name, seed: c.seed, expected: c.expected };
  if (missing.length) {
    return {
      ...base,
      observed: "-",
      status: "skip",
      checks: [],
      evidence: [],
      facts: {},
      durationMs: 0,
      note: `needs ${missing.map((n) => NEED_TEXT[n]).join(", ")}`,
    };
  }
  try {
    const o = await c.run(ctx);
    const pass = o.observed === c.expected && o.checks.every((x) => x.ok);
    return {
      ...base,
      observed: o.observed,
      status: pass ? "pass" : "fail",
      checks: o.checks,
      evidence: o.evidence,
      facts: o.facts ?? {},
      durationMs: Date.now() - t0,
    };
  } catch (err) {
    const e = err as Error;
    return {
      ...base,
      observed: "error",
      status: "error",
      checks: [],
      evidence: [],
      facts: {},
      durationMs: Date.now() - t0,
      note: `${e.name}: ${e.message}`,
    };
  }
}
