// The console's vocabulary, one definition per word: the glossary page (/glossary) lists them and
// every inline explanation (<Term>) takes its one-line title from here, so the two cannot drift.
// The longer story is in docs/architecture.md and docs/evidence.md.
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
    term: "Aborted, outcome unknown",
    wire: "aborted_unknown",
    short: "An operation stopped part-way whose effect nobody can prove either way.",
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
    term: "Not yet quiet",
    wire: "stop_incomplete",
    short: "The receipt's decision while something is pending, unknown or still holding a lease; it names who owns each open item.",
  },
  {
    id: "stopped-and-quiet",
    term: "Stopped and quiet",
    wire: "stopped_and_quiet",
    short: "The receipt's decision when nothing is pending, nothing is unknown and no lease is active.",
  },
  {
    id: "voided",
    term: "Voided",
    short:
      "An approval cancelled because its run stopped (paused, killed, fleet stop, lease revoked or expired): nobody is asked about it, and a yes admits nothing.",
  },
];

export const GLOSSARY_BY_ID: ReadonlyMap<string, GlossaryEntry> = new Map(GLOSSARY.map((e) => [e.id, e]));
