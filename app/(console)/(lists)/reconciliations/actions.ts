"use server";
// Open work: reconciliation of unknown outcomes, and recovery of completed effects. A manager assigns; the
// owner records what they found or did, or starts the provider's compensation (recovery).
// The dal (lib/modules/stop/reconciliations.ts) checks the team, that the assignee is a member, that only the
// assignee (or a manager/admin) resolves, and re-issues the stop receipt.
import { serverAction } from "@/lib/actions/run-action";
import { AssignInput, AssignRecoveryInput, RecordRecoveryInput, RecoveryIdInput, ResolveInput } from "@/lib/schemas/console";
import { assignReconciliation, assignRecovery, recordRecovery, resolveReconciliation, startRecovery } from "@/lib/modules/stop";

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

export const assignRecoveryAction = serverAction(
  { name: "assign recovery", input: AssignRecoveryInput, action: "reconciliation.assign", revalidate: ["/reconciliations"] },
  async ({ session, input }) => {
    const r = await assignRecovery(session.principal, input.recoveryId, input.assigneeUserId);
    return { recoveryId: r.id };
  },
);

export const startRecoveryAction = serverAction(
  { name: "start recovery", input: RecoveryIdInput, action: "reconciliation.resolve", revalidate: ["/reconciliations"] },
  async ({ session, input }) => {
    const r = await startRecovery(session.principal, input.recoveryId);
    return { recoveryId: r.id, state: r.state as string };
  },
);

export const recordRecoveryAction = serverAction(
  { name: "record recovery", input: RecordRecoveryInput, action: "reconciliation.resolve", revalidate: ["/reconciliations"] },
  async ({ session, input }) => {
    const { recoveryId, ...body } = input;
    const r = await recordRecovery(session.principal, recoveryId, body);
    return { recoveryId: r.id, state: r.state as string };
  },
);
