// Read model for the reconciliation queue: every `unknown` outcome with its age, who holds it, and how
// it was resolved. Writes (assign / resolve) go through lib/modules/stop/reconciliations.ts.
import "server-only";
import { prisma } from "../../../platform/db/prisma";
import { authorize } from "../../../platform/auth/authorize";
import type { Principal } from "../../../platform/auth/principal";
import type { Role } from "../../../control/types";
import { consoleTeam } from "../../../platform/auth/console-team";
import { OPEN_RECONCILIATION_STATUSES, whyUnknownText, type ReconciliationStatus } from "../../../control/reconciliation";

export interface ReconciliationRow {
  id: string;
  status: ReconciliationStatus;
  createdAt: string;
  barrierId: string | null;
  runId: string;
  operationId: string;
  tool: string;
  providerName: string | null;
  providerJobId: string | null;
  /** Why the outcome was unknown; kept after resolution (null: resolved before it was kept). */
  whyUnknown: string | null;
  providerResponse: string | null;
  effectExpected: string | null;
  assignee: { id: string; email: string; name: string } | null;
  assignedBy: string | null;
  assignedAt: string | null;
  resolution: "effect_present" | "effect_absent" | null;
  evidence: string | null;
  resolvedAt: string | null;
  resolvedBy: string | null;
}

export interface Member {
  id: string;
  email: string;
  name: string;
  role: Role;
}

export async function listConsoleReconciliations(
  p: Principal,
  filter: { status?: "open" | "resolved" | "all"; mine?: boolean } = {},
): Promise<ReconciliationRow[]> {
  authorize(p, "run.read");
  const teamId = consoleTeam(p);
  const status = filter.status ?? "open";
  const rows = await prisma().reconciliation.findMany({
    where: {
      teamId,
      ...(status === "open" ? { status: { in: [...OPEN_RECONCILIATION_STATUSES] } } : status === "resolved" ? { status: "resolved" } : {}),
      ...(filter.mine && p.type !== "system" && p.userId ? { assigneeUserId: p.userId } : {}),
    },
    orderBy: { createdAt: "asc" },
    take: 500,
    include: { settlement: true, operation: true },
  });
  const userIds = [...new Set(rows.map((r) => r.assigneeUserId).filter((x): x is string => !!x))];
  const users = userIds.length
    ? await prisma().user.findMany({ where: { id: { in: userIds } }, select: { id: true, email: true, name: true } })
    : [];
  const byId = new Map(users.map((u) => [u.id, u]));
  return rows.map((r) => ({
    id: r.id,
    status: r.status,
    createdAt: r.createdAt.toISOString(),
    barrierId: r.settlement?.barrierId ?? null,
    runId: r.operation.runId,
    operationId: r.operation.operationId,
    tool: r.operation.tool,
    providerName: r.operation.providerName,
    providerJobId: r.operation.providerJobId,
    // Why it was unknown. Open: the settlement's reason (or, without a barrier, its executor's report).
    // Resolved: the reason kept at resolution, since resolving re-settled the operation and overwrote
    // both; null for a row resolved before that reason was kept.
    whyUnknown: r.status === "resolved" ? r.unknownReason : whyUnknownText(r.settlement?.settledReason, r.operation.stateReason),
    providerResponse: r.settlement?.providerResponse ?? null,
    effectExpected: r.settlement?.effectExpected ?? null,
    assignee: r.assigneeUserId
      ? (byId.get(r.assigneeUserId) ?? { id: r.assigneeUserId, email: r.assigneeUserId, name: r.assigneeUserId })
      : null,
    assignedBy: r.assignedBy,
    assignedAt: r.assignedAt?.toISOString() ?? null,
    resolution: r.resolution,
    evidence: r.evidence,
    resolvedAt: r.resolvedAt?.toISOString() ?? null,
    resolvedBy: r.resolvedBy,
  }));
}

/** The people a manager can hand a reconciliation to: the members of their own team. */
export async function listTeamMembers(p: Principal): Promise<Member[]> {
  authorize(p, "run.read");
  const teamId = consoleTeam(p);
  const rows = await prisma().membership.findMany({ where: { teamId }, include: { user: true }, orderBy: { createdAt: "asc" } });
  return rows.map((m) => ({ id: m.user.id, email: m.user.email, name: m.user.name, role: m.role as Role }));
}
