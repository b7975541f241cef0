// Status badges. Lifecycle and breaker are two different state machines (docs/ideas.md#control-state), so they are two
// badges everywhere, each labelled with what it is, never merged into one "status".
import { human } from "./format";
import { ACTIVITY_MEANING, type Activity } from "@/lib/control/activity";

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

function Badge({ tone, label, value, title }: { tone: string; label?: string; value: string; title?: string }) {
  return (
    <span className={`badge tone-${tone}`} title={title ?? (label ? `${label}: ${human(value)}` : human(value))}>
      {label ? <span className="badge-label">{label}</span> : null}
      <span className="badge-value">{human(value)}</span>
    </span>
  );
}

export const LifecycleBadge = ({ value }: { value: string }) => (
  <Badge tone={LIFECYCLE_TONE[value] ?? "muted"} label="lifecycle" value={value} />
);
export const BreakerBadge = ({ value }: { value: string }) => <Badge tone={BREAKER_TONE[value] ?? "muted"} label="breaker" value={value} />;
export const DecisionBadge = ({ value }: { value: string }) => <Badge tone={DECISION_TONE[value] ?? "muted"} value={value} />;
export const SettledBadge = ({ value }: { value: string | null }) => (
  <Badge tone={value ? (SETTLED_TONE[value] ?? "muted") : "muted"} value={value ?? "settling"} />
);
export const PhaseBadge = ({ value }: { value: string }) => <Badge tone={PHASE_TONE[value] ?? "muted"} label="phase" value={value} />;
export const ReceiptDecisionBadge = ({ value, large }: { value: string; large?: boolean }) => (
  <span className={large ? "badge-large" : undefined}>
    <Badge tone={RECEIPT_TONE[value] ?? "muted"} value={value} />
  </span>
);
export const ReconciliationBadge = ({ value }: { value: string }) => <Badge tone={RECON_TONE[value] ?? "muted"} value={value} />;
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
