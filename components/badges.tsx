// Status badges. Lifecycle and breaker are two different state machines (docs/ideas.md#control-state), so they are two
// badges everywhere, each labelled with what it is, never merged into one "status".
import { human } from "./format";
import { ACTIVITY_MEANING, type Activity } from "@/lib/control/activity";
import { DECISION_WORDS, PHASE_WORDS, RECONCILIATION_STATUS_WORDS, SETTLED_WORDS, SETTLING_WORD, wordFor } from "@/lib/control/stop-words";
import { GLOSSARY_BY_TERM } from "./glossary";

const LIFECYCLE_TONE: Record<string, string> = { normal: "ok", paused: "warn", killed: "danger" };
const BREAKER_TONE: Record<string, string> = { closed: "ok", half_open: "warn", open: "danger" };
const DECISION_TONE: Record<string, string> = { allow: "ok", hold: "warn", deny: "danger" };
const SETTLED_TONE: Record<string, string> = { cancelled_without_effect: "ok", completed_and_verified: "info", unknown: "danger" };
const PHASE_TONE: Record<string, string> = { revoking: "danger", settling: "warn", quiet: "info", complete: "ok" };
const RECEIPT_TONE: Record<string, string> = { stopped_and_quiet: "ok", stop_incomplete: "danger" };
const RECON_TONE: Record<string, string> = { awaiting_assignee: "danger", assigned: "warn", resolved: "ok" };
const ACTIVITY_TONE: Record<Activity, string> = {
  working: "ok",
  idle: "info",
  stale: "warn",
  paused: "warn",
  killed: "danger",
  finished: "muted",
};
const APPROVAL_TONE: Record<string, string> = { pending: "warn", approved: "ok", denied: "danger", expired: "muted", voided: "muted" };
const RECOVERY_TONE: Record<string, string> = { open: "warn", in_progress: "info", failed: "danger", rolled_back: "ok", accepted: "ok" };

function Badge({ tone, label, value, title, words }: { tone: string; label?: string; value: string; title?: string; words?: string }) {
  const shown = words ?? human(value);
  return (
    <span className={`badge tone-${tone}`} title={title ?? (label ? `${label}: ${shown}` : shown)} data-state={value}>
      {label ? <span className="badge-label">{label}</span> : null}
      <span className="badge-value">{shown}</span>
    </span>
  );
}

/** A stop's state in its one vocabulary (lib/control/stop-words.ts), its glossary definition on hover. */
function StateBadge({ tone, label, value, words }: { tone: string; label?: string; value: string; words: string }) {
  const meaning = GLOSSARY_BY_TERM.get(words.toLowerCase())?.short;
  const title = `${label ? `${label}: ` : ""}${words}${meaning ? ` — ${meaning}` : ""}`;
  return <Badge tone={tone} label={label} value={value} words={words} title={title} />;
}

export const LifecycleBadge = ({ value }: { value: string }) => (
  <Badge tone={LIFECYCLE_TONE[value] ?? "muted"} label="lifecycle" value={value} />
);
export const BreakerBadge = ({ value }: { value: string }) => <Badge tone={BREAKER_TONE[value] ?? "muted"} label="breaker" value={value} />;
export const DecisionBadge = ({ value }: { value: string }) => <Badge tone={DECISION_TONE[value] ?? "muted"} value={value} />;
export const SettledBadge = ({ value }: { value: string | null }) => (
  <StateBadge
    tone={value ? (SETTLED_TONE[value] ?? "muted") : "muted"}
    value={value ?? "settling"}
    words={value ? wordFor(SETTLED_WORDS, value) : SETTLING_WORD}
  />
);
export const PhaseBadge = ({ value }: { value: string }) => (
  <StateBadge tone={PHASE_TONE[value] ?? "muted"} label="phase" value={value} words={wordFor(PHASE_WORDS, value)} />
);
export const ReceiptDecisionBadge = ({ value, large }: { value: string; large?: boolean }) => (
  <span className={large ? "badge-large" : undefined}>
    <StateBadge tone={RECEIPT_TONE[value] ?? "muted"} value={value} words={wordFor(DECISION_WORDS, value)} />
  </span>
);
export const ReconciliationBadge = ({ value }: { value: string }) => (
  <StateBadge tone={RECON_TONE[value] ?? "muted"} value={value} words={wordFor(RECONCILIATION_STATUS_WORDS, value)} />
);
export const RecoveryBadge = ({ value }: { value: string }) => (
  <Badge tone={RECOVERY_TONE[value] ?? "muted"} label="recovery" value={value} />
);
/** What the run is doing now (lib/control/activity.ts), its meaning on hover. */
export const ActivityBadge = ({ value }: { value: Activity }) => (
  <Badge tone={ACTIVITY_TONE[value]} label="activity" value={value} title={`${value}: ${ACTIVITY_MEANING[value]}`} />
);
export const ApprovalBadge = ({ value }: { value: string }) => (
  <Badge tone={APPROVAL_TONE[value] ?? "muted"} label="approval" value={value} />
);
