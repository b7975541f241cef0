// Reconciliations: an `unknown` outcome handed to a named person (docs/architecture.md#the-cancellation-barrier).
// The named status sets and the rule of who may resolve one, as data and a predicate, so the dal's
// writes, the console's lists and the counters all say "open" the same way.
import type { Role } from "./types";

export const RECONCILIATION_STATUSES = ["awaiting_assignee", "assigned", "resolved"] as const;
export type ReconciliationStatus = (typeof RECONCILIATION_STATUSES)[number];

/** Still holding a barrier open: nobody has resolved it yet (assigned or not). */
export const OPEN_RECONCILIATION_STATUSES = ["awaiting_assignee", "assigned"] as const satisfies readonly ReconciliationStatus[];

export function isOpenReconciliation(status: ReconciliationStatus): boolean {
  return (OPEN_RECONCILIATION_STATUSES as readonly string[]).includes(status);
}

/** Roles that may resolve (and assign) any reconciliation of their team, not only their own. */
export const RECONCILIATION_MANAGERS = ["manager", "admin"] as const satisfies readonly Role[];

/**
 * Who may resolve: the assignee, or a manager/admin. Anyone else — even an operator who could kill the
 * run — may not, because the resolution is a person's claim about an effect and names that person.
 */
export function mayResolveReconciliation(caller: { role: Role | null; userId: string | null }, assigneeUserId: string | null): boolean {
  if (caller.role && (RECONCILIATION_MANAGERS as readonly Role[]).includes(caller.role)) return true;
  return assigneeUserId !== null && caller.userId !== null && caller.userId === assigneeUserId;
}
