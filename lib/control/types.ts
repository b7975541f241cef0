// Domain vocabulary shared by every layer. Plain strings, no Prisma types (lib/control is pure).

export const LIFECYCLES = ["normal", "paused", "killed"] as const;
export type Lifecycle = (typeof LIFECYCLES)[number];

export const BREAKER_STATES = ["closed", "open", "half_open"] as const;
export type BreakerState = (typeof BREAKER_STATES)[number];

export const ROLES = ["viewer", "operator", "manager", "admin"] as const;
export type Role = (typeof ROLES)[number];

export const KEY_KINDS = ["agent", "worker", "gateway", "operator"] as const;
export type KeyKind = (typeof KEY_KINDS)[number];
/** Machine callers: they can read and ask, never write control state (docs/ideas.md#control-state). */
export const MACHINE_KINDS = ["agent", "worker", "gateway"] as const satisfies readonly KeyKind[];

export const HARNESSES = ["claude_code", "codex", "mcp", "custom"] as const;
export type Harness = (typeof HARNESSES)[number];

export const OPERATION_KINDS = ["call", "queued", "scheduled", "retry"] as const;
export type OperationKind = (typeof OPERATION_KINDS)[number];

/** Terminal states: an operation in one of these never runs (again). */
export const FINISHED_OPERATION_STATES = ["succeeded", "failed", "cancelled_not_started", "denied", "aborted_unknown"] as const;
/** Waiting or running, then the terminal states: every state an operation can be in. */
export const OPERATION_STATES = ["queued", "scheduled", "running", ...FINISHED_OPERATION_STATES] as const;
export type OperationState = (typeof OPERATION_STATES)[number];
/** The outcomes an executor reports on `complete`; a retried report must repeat the recorded one. */
export const REPORTED_OUTCOMES = ["succeeded", "failed", "aborted_unknown"] as const satisfies readonly OperationState[];
export type ReportedOutcome = (typeof REPORTED_OUTCOMES)[number];

export function isFinishedOperation(state: OperationState): boolean {
  return (FINISHED_OPERATION_STATES as readonly string[]).includes(state);
}
export function isReportedOutcome(state: OperationState): state is ReportedOutcome {
  return (REPORTED_OUTCOMES as readonly string[]).includes(state);
}

export const DECISIONS = ["allow", "hold", "deny"] as const;
export type Decision = (typeof DECISIONS)[number];

/** Gate reason codes (docs/architecture.md#the-gate), first match wins in this order. */
export const GATE_REASONS = [
  "missing_state",
  "killed",
  "parent_revoked",
  /** The run finished (its harness said it ended): finishing ends its authority. */
  "finished",
  "lease_revoked",
  "lease_expired",
  "stale_epoch",
  "operation_expired",
  "breaker_open",
  "paused",
  "already_applied",
  /** The team's policy has a deny rule for this call (docs/policies.md). */
  "policy_denied",
  /** Hold: the policy requires a person's approval of this exact call; the answer names the approval. */
  "awaiting_approval",
  "approval_denied",
  /** The approval was not given (or not used) before its deadline. */
  "approval_expired",
  /** A budget would be crossed by this call's reservation (deny, or hold per the budget's rule). */
  "budget_exhausted",
  /** The control record could not be read in time (slow or unreachable database): deny. */
  "control_unavailable",
  "allowed",
] as const;
export type GateReason = (typeof GATE_REASONS)[number];

export const SETTLED_STATES = ["cancelled_without_effect", "completed_and_verified", "unknown"] as const;
export type SettledState = (typeof SETTLED_STATES)[number];
