"use server";
// Reconciliation of unknown outcomes: a manager assigns, the assignee records what they found.
// The dal (lib/modules/stop/reconciliations.ts) checks the team, that the assignee is a member, that only the
// assignee (or a manager/admin) resolves, and re-issues the stop receipt.
import { serverAction } from "@/lib/actions/run-action";
import { AssignInput, ResolveInput } from "@/lib/schemas/console";
import { assignReconciliation, resolveReconciliation } from "@/lib/modules/stop";

export const assignReconciliationAction = serverAction(
  { name: "assign", input: AssignInput, action: "reconciliation.assign", revalidate: ["/reconciliations"] },
  async ({ session, input }) => {
    await assignReconciliation(session.principal, input.reconciliationId, input.assigneeUserId);
    return { reconciliationId: input.reconciliationId };
  },
);

export const resolveReconciliationAction = serverAction(
  { name: "resolve", input: ResolveInput, action: "reconciliation.resolve", revalidate: ["/reconciliations"] },
  async ({ session, input }) => {
    await resolveReconciliation(session.principal, input.reconciliationId, { resolution: input.resolution, evidence: input.evidence });
    return { reconciliationId: input.reconciliationId };
  },
);
