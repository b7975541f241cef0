// Facts read straight from the eval run's database, for the checks a drill against a live deployment
// cannot make (DbInspector in lib/drill/types.ts). Reads only — except the two actions a case asks
// for explicitly: a manager assigning a reconciliation (the console's action, through lib/modules) and a
// control row that goes missing.
import { prisma } from "../../lib/platform/db/prisma";
import { assignReconciliation, listReconciliations } from "../../lib/modules/stop/reconciliations";
import type { DbInspector } from "../../lib/drill/types";
import type { EvalTeam } from "./fixtures";

export function dbInspector(team: EvalTeam): DbInspector {
  const db = prisma();
  const opRow = (operationId: string) => db.operation.findUnique({ where: { teamId_operationId: { teamId: team.teamId, operationId } } });
  return {
    async operation(operationId) {
      const op = await opRow(operationId);
      if (!op) return null;
      const effectReceipts = await db.effectReceipt.count({ where: { operationId: op.id } });
      return { state: op.state, stateReason: op.stateReason, kind: op.kind, effectReceipts, outcomeDetail: op.outcomeDetail };
    },
    async decisions(operationId) {
      const rows = await db.gateDecision.findMany({ where: { teamId: team.teamId, operationId }, orderBy: { at: "asc" } });
      return rows.map((r) => ({ source: r.source, decision: r.decision, reason: r.reason, at: r.at }));
    },
    async settlement(operationId) {
      const op = await opRow(operationId);
      if (!op) return null;
      const s = await db.settlement.findFirst({ where: { operationId: op.id }, orderBy: { id: "desc" } });
      return s
        ? {
            stateAtBarrier: s.stateAtBarrier,
            settledState: s.settledState,
            providerResponse: s.providerResponse,
            effectObserved: s.effectObserved,
          }
        : null;
    },
    async receipts(barrierId) {
      const rows = await db.stopReceipt.findMany({
        where: { barrierId },
        orderBy: { version: "asc" },
        select: { version: true, decision: true },
      });
      return rows.map((r) => ({ version: r.version, decision: r.decision }));
    },
    auditCount: (target) => db.auditEvent.count({ where: { teamId: team.teamId, target } }),
    async assignReconciliation(barrierId) {
      const manager = team.users.manager;
      if (!manager) return null;
      const principal = { type: "user" as const, userId: manager.id, email: manager.email, teamId: team.teamId, role: "manager" as const };
      const [open] = await listReconciliations(principal, { barrierId, status: "open" });
      if (!open) return null;
      await assignReconciliation(principal, open.id, manager.id);
      return manager.email;
    },
    async dropLease(leaseId) {
      await db.lease.delete({ where: { id: leaseId } });
    },
    claimCount: (operationId) => db.operationClaim.count({ where: { operation: { teamId: team.teamId, operationId } } }),
  };
}
