// The stop event types a webhook endpoint can subscribe to (no Node imports: the console's form uses it).
export const EVENT_TYPES = [
  "run.paused",
  "run.resumed",
  "run.killed",
  "barrier.dispatch_stopped",
  "barrier.complete",
  "receipt.issued",
  "reconciliation.assigned",
  "reconciliation.resolved",
  "recovery.changed",
  "recovery.overdue",
  "breaker.opened",
  "breaker.closed",
  "approval.requested",
  "approval.decided",
] as const;
export type EventType = (typeof EVENT_TYPES)[number];
