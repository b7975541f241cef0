// The console's vocabulary, one definition per word: the glossary page (/glossary) lists them and
// every inline explanation (<Term>) takes its one-line title from here, so the two cannot drift.
// The longer story is in docs/architecture.md and docs/evidence.md. A stop's states are named by
// lib/control/stop-words.ts; their entries take the term from there, so a page and its glossary say the same word.
import {
  DECISION_WORDS,
  OPERATION_STATE_WORDS,
  PHASE_WORDS,
  RECONCILIATION_STATUS_WORDS,
  RESOLUTION_WORDS,
  RUNG_STATUS_WORDS,
  RUNG_WORDS,
  SETTLED_WORDS,
  SETTLING_WORD,
} from "@/lib/control/stop-words";

export interface GlossaryEntry {
  /** the anchor on /glossary */
  id: string;
  term: string;
  /** the word as it appears in downloads, when it differs */
  wire?: string;
  /** one sentence: the tooltip */
  short: string;
  /** the rest of the definition on the glossary page */
  more?: string;
}

export const GLOSSARY: GlossaryEntry[] = [
  {
    id: "admit",
    term: "Admit",
    short: "The gate's yes to a worker picking up queued work: the run must be live, its lease valid and its epoch current.",
    more: "A killed or paused run is not admitted; the refusal is recorded like any gate decision.",
  },
  {
    id: "aborted-unknown",
    term: SETTLED_WORDS.unknown,
    wire: "aborted_unknown, unknown",
    short: "An operation stopped part-way, or a call a barrier could not settle, whose effect nobody can prove either way.",
    more: "It is never rounded to failed or cancelled: it opens a reconciliation for a named person to record what happened.",
  },
  {
    id: "approval",
    term: "Approval",
    short:
      "A person's yes or no to one call a policy rule holds, bound to that run, lease, epoch, operation and arguments, with a deadline.",
    more: "Approving one call never admits another; past its deadline the gate answers approval expired, and a pause or kill voids it.",
  },
  {
    id: "barrier",
    term: "Barrier",
    short: "The durable stop a kill starts: leases revoked, in-flight calls cancelled and checked, a quiet period, then a receipt.",
    more: "Any barrier engine can take over a crashed one, because it works from rows in the database.",
  },
  {
    id: "budget",
    term: "Budget",
    short:
      "A limit on a unit (calls, usd, tokens…) per run tree, agent or team, in total or per minute, checked by the gate before each call.",
    more: "A call that would cross it is denied (or held, per policy); a rule may also trip the breaker or pause the tree when it is crossed.",
  },
  {
    id: "cancel-unacknowledged",
    term: "Cancel not acknowledged",
    wire: "cancel_unacknowledged",
    short: "The provider was asked to cancel but never reached a final state (or there is no provider to ask), so the outcome is unknown.",
  },
  {
    id: "epoch",
    term: "Epoch",
    short: "A counter on each run that only goes up; a kill raises it, and any request stamped with an older epoch is denied.",
  },
  {
    id: "half-open",
    term: "Half open",
    wire: "half_open",
    short: "A breaker after its cool-down: exactly one probe call is let through; success closes the breaker, failure opens it again.",
  },
  {
    id: "late-requests-denied",
    term: "Late requests denied",
    wire: "late_requests_denied",
    short: "Requests that arrived under a stopped run after the stop and were refused and recorded.",
    more: "The receipt counts them; they prove the stop held, not that something went wrong.",
  },
  {
    id: "lease",
    term: "Lease",
    short:
      "The time-limited authority a run holds to act; a child's lease is never wider or longer than its parent's, and a kill revokes it.",
  },
  {
    id: "policy",
    term: "Policy",
    short: "The team's versioned rules the gate applies to each call: allow, deny, require an approval, or count against a budget.",
    more: "Versions are saved whole and never edited; one is enabled at a time, and every save and enable is audited with its diff.",
  },
  {
    id: "quiet-period",
    term: "Quiet period",
    short: "The wait after every in-flight call is settled, per provider, during which any late request is denied and recorded.",
    more: "A late effect found during the period restarts it and shows up in the next receipt version.",
  },
  {
    id: "receipt",
    term: "Receipt",
    short: "The signed record of a stop: what was requested, what each in-flight call turned out to be, and the decision, with a digest.",
    more: "A later resolution issues a new version; old versions stay readable at the same address.",
  },
  {
    id: "reconciliation",
    term: "Reconciliation",
    short: "A work item for a named person: an outcome the system could not prove, to be checked in the provider and recorded.",
  },
  {
    id: "recovery",
    term: "Recovery",
    short: "What is done about an effect that completed before the stop: rolled back, accepted or failed, with an owner and a due time.",
    more: "The stop's decision never depends on recovery; a stop is about quiet, not undo.",
  },
  {
    id: "reservation",
    term: "Reservation",
    short:
      "The part of a budget a call holds from the gate's allow until it reports its actual cost; work that never started gives it back.",
  },
  {
    id: "restart",
    term: "Restart",
    short:
      "Starting a killed root again as a new run for the same task, only once its receipt is stopped and quiet and no recovery is open.",
    more: "The new run inherits the old tree's operation ledger, so work that already happened is not done twice.",
  },
  {
    id: "stop-incomplete",
    term: DECISION_WORDS.stop_incomplete,
    wire: "stop_incomplete",
    short: "The receipt's decision while something is pending, unknown or still holding a lease; it names who owns each open item.",
  },
  {
    id: "stopped-and-quiet",
    term: DECISION_WORDS.stopped_and_quiet,
    wire: "stopped_and_quiet",
    short: "The receipt's decision when nothing is pending, nothing is unknown and no lease is active.",
  },
  {
    id: "voided",
    term: "Voided",
    short:
      "An approval cancelled because its run stopped (paused, killed, fleet stop, lease revoked or expired): nobody is asked about it, and a yes admits nothing.",
  },

  // The states of a stop (lib/control/stop-words.ts): the barrier's phase, the ladder's rungs and their status.
  {
    id: "phase-revoking",
    term: PHASE_WORDS.revoking,
    wire: "revoking",
    short: "The barrier's first phase: runs killed, epochs raised and leases revoked, so every gate denies new work.",
  },
  {
    id: "phase-settling",
    term: PHASE_WORDS.settling,
    wire: "settling",
    short: "The barrier's phase while in-flight calls are cancelled at their providers and their effects checked.",
  },
  {
    id: "phase-quiet",
    term: PHASE_WORDS.quiet,
    wire: "quiet",
    short: "The barrier's phase after every call is settled: late requests are denied and recorded until the quiet period ends.",
  },
  {
    id: "receipt-issued",
    term: PHASE_WORDS.complete,
    wire: "complete, receipt_issued",
    short: "The barrier's last phase and the ladder's last rung: a receipt exists. Its decision says whether the stop is quiet.",
    more: "An issued receipt may say not yet quiet; a later resolution issues the next version.",
  },
  {
    id: "cancellation-requested",
    term: RUNG_WORDS.cancellation_requested,
    wire: "cancellation_requested",
    short: "The ladder's first rung: who asked for the stop, when and why. A request alone proves nothing stopped.",
  },
  {
    id: "observed-by-target",
    term: RUNG_WORDS.observed_by_target,
    wire: "observed_by_target",
    short: "Every run of the subtree acknowledged the stop (a signal accepted, a turn interrupted, a process ended).",
    more: "Not proven when a run never acknowledged; the stop does not rest on it, because every gate denies the run anyway.",
  },
  {
    id: "new-work-prevented",
    term: RUNG_WORDS.new_work_prevented,
    wire: "new_work_prevented",
    short: "Every run of the subtree is killed and every lease revoked: the gate denies any new call.",
  },
  {
    id: "queued-work-cancelled",
    term: RUNG_WORDS.queued_work_cancelled,
    wire: "queued_work_cancelled",
    short: "Queued, scheduled and retry work of the subtree was cancelled before it started, and kept.",
  },
  {
    id: "execution-quiesced",
    term: RUNG_WORDS.execution_quiesced,
    wire: "execution_quiesced",
    short: "Every in-flight call ended with a known outcome; not proven while an outcome is unknown.",
  },
  {
    id: "environment-terminated",
    term: RUNG_WORDS.environment_terminated,
    wire: "environment_terminated",
    short: "Every supervised run's container was verified empty by its supervisor (only on the ladder when a run was supervised).",
  },
  {
    id: "effects-settled",
    term: RUNG_WORDS.effects_settled,
    wire: "effects_settled",
    short: "Every in-flight call settled or reconciled by a person, and the quiet period is over.",
  },
  {
    id: "rung-done",
    term: RUNG_STATUS_WORDS.done,
    wire: "done",
    short: "A rung of the stop ladder whose fact holds over the whole subtree, with its evidence and time.",
  },
  {
    id: "rung-pending",
    term: RUNG_STATUS_WORDS.pending,
    wire: "pending",
    short: "A rung the barrier is still working towards: it may become done by waiting.",
  },
  {
    id: "rung-uncertain",
    term: RUNG_STATUS_WORDS.uncertain,
    wire: "uncertain",
    short: "A rung the facts cannot show and waiting will not change; it says what is not proven, not that the stop failed.",
  },
  // How each in-flight call settled, and an operation's state.
  {
    id: "cancelled-without-effect",
    term: SETTLED_WORDS.cancelled_without_effect,
    wire: "cancelled_without_effect",
    short: "The provider stopped the call and its authoritative system shows no effect.",
  },
  {
    id: "completed-and-verified",
    term: SETTLED_WORDS.completed_and_verified,
    wire: "completed_and_verified",
    short: "The call's effect is proven present (an effect receipt with its rollback owner); undoing it is a recovery.",
  },
  {
    id: "settling",
    term: SETTLING_WORD,
    short: "An in-flight call the barrier is still cancelling and checking.",
  },
  { id: "op-queued", term: OPERATION_STATE_WORDS.queued, wire: "queued", short: "Work registered to run later, not admitted yet." },
  {
    id: "op-scheduled",
    term: OPERATION_STATE_WORDS.scheduled,
    wire: "scheduled",
    short: "Work registered to run at a set time, not admitted yet.",
  },
  {
    id: "op-running",
    term: OPERATION_STATE_WORDS.running,
    wire: "running",
    short: "A call the gate allowed that has not reported how it ended.",
  },
  { id: "op-succeeded", term: OPERATION_STATE_WORDS.succeeded, wire: "succeeded", short: "A call that ended with its effect present." },
  { id: "op-failed", term: OPERATION_STATE_WORDS.failed, wire: "failed", short: "A call that ended without its effect." },
  {
    id: "op-cancelled-not-started",
    term: OPERATION_STATE_WORDS.cancelled_not_started,
    wire: "cancelled_not_started",
    short: "Queued, scheduled or retry work a stop cancelled before it began; kept with its operation id, never deleted.",
  },
  { id: "op-denied", term: OPERATION_STATE_WORDS.denied, wire: "denied", short: "A call the gate refused: it never started." },
  // A reconciliation's status and what a person recorded.
  {
    id: "needs-an-owner",
    term: RECONCILIATION_STATUS_WORDS.awaiting_assignee,
    wire: "awaiting_assignee",
    short: "An unknown outcome nobody holds yet: a manager assigns it to a person.",
  },
  {
    id: "assigned",
    term: RECONCILIATION_STATUS_WORDS.assigned,
    wire: "assigned",
    short: "An unknown outcome a named person holds and has not recorded yet.",
  },
  {
    id: "resolved",
    term: RECONCILIATION_STATUS_WORDS.resolved,
    wire: "resolved",
    short: "An unknown outcome a person checked and recorded as effect present or effect absent, with evidence.",
  },
  {
    id: "effect-present",
    term: RESOLUTION_WORDS.effect_present,
    wire: "effect_present",
    short: "A person found the effect happened; an effect receipt is recorded.",
  },
  {
    id: "effect-absent",
    term: RESOLUTION_WORDS.effect_absent,
    wire: "effect_absent",
    short: "A person found the effect did not happen.",
  },
];

export const GLOSSARY_BY_ID: ReadonlyMap<string, GlossaryEntry> = new Map(GLOSSARY.map((e) => [e.id, e]));

/** The entry whose term is this word (a state's label), for an inline explanation of it. */
export const GLOSSARY_BY_TERM: ReadonlyMap<string, GlossaryEntry> = new Map(GLOSSARY.map((e) => [e.term.toLowerCase(), e]));
