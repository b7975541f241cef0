// Every eval case, in the articles' order. Cases that need no process control are the drill cases of
// lib/drill (the same code `quiesce drill` runs against a live deployment), here run against the
// eval stack — pods as workers, the real provider process, DB inspection; the others control
// processes themselves.
import { DRILL_CASES, type DrillCase } from "../../lib/drill/index";
import type { EvalCase } from "./types";
import { cancellationWorkerCrashesMidBarrier } from "./cancellation-worker-crashes-mid-barrier";
import { restartSurvival } from "./restart-survival";
import { killWithFullQueueEval } from "./kill-with-full-queue";
import { EVIDENCE_CASES } from "./evidence";
import { anonymousBadKeysCannotLockOut } from "./anonymous-bad-keys-cannot-lock-out";
import { REMOTE_TASK_CASES } from "./remote-tasks";
import { ENVIRONMENT_CASES } from "./environment";
import { POLICY_CASES } from "./policy";

function fromDrill(c: DrillCase): EvalCase {
  return { ...c, needs: [], run: (stack) => c.run(stack.drillContext()) };
}

const drill = (name: string): EvalCase => {
  const c = DRILL_CASES.find((x) => x.name === name);
  if (!c) throw new Error(`no drill case ${name}`);
  return fromDrill(c);
};

export const EVAL_CASES: EvalCase[] = [
  // docs/ideas.md#barriers — cancellation_evals
  drill("queued_call_starts_after_parent_revocation"),
  drill("provider_commits_during_cancel_request"),
  cancellationWorkerCrashesMidBarrier,
  drill("delayed_retry_fires_after_revocation"),
  drill("provider_status_unavailable"),
  drill("child_run_misses_parent_notification"),
  // docs/ideas.md#control-state — what to actually check
  drill("pause_from_another_process"),
  killWithFullQueueEval,
  restartSurvival,
  drill("resume_re_evaluated"),
  drill("kill_during_long_call"),
  drill("unauthorized_interrupt"),
  drill("missing_control_row"),
  // docs/ideas.md#five-questions — failure behaviour and the approved-artifact handoff fixture
  drill("cancellation_requested_no_ack"),
  drill("approved_artifact_handoff"),
  drill("side_effect_completed_before_stop"),
  // docs/fleet-stop.md — a fleet stop while matching runs keep being created
  drill("fleet_stop_with_runs_created_during_the_stop"),
  // stop evidence over the whole subtree (docs/evidence.md)
  ...EVIDENCE_CASES,
  // docs/security/authorization.md#holders — only the holder is a witness; finished is no way out
  drill("late_report_from_stranger_changes_nothing"),
  drill("finish_does_not_escape_fleet_kill"),
  // docs/evidence.md#recovery — recovery of a completed effect, proven by the provider
  drill("completed_effect_rolled_back_and_verified"),
  drill("compensation_accepted_but_not_done"),
  drill("restart_blocked_by_open_recovery"),
  drill("restart_replays_ledger_already_applied"),
  // docs/security/identity.md#throttling — a stranger's bad keys cannot lock a team out
  anonymousBadKeysCannotLockOut,
  // docs/design/mcp-tasks.md — remote work settled from the task the MCP server or A2A agent holds
  ...REMOTE_TASK_CASES,
  // docs/evidence.md#the-environment — the environment stops too, and the receipt claims only what was observed
  ...ENVIRONMENT_CASES,
  drill("unsupervised_run_claims_nothing_about_processes"),
  // docs/policies.md — authority that narrows on its own: approvals bound to one call, budgets in the gate
  ...POLICY_CASES,
];
