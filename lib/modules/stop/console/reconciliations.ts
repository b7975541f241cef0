// Read model for open work (docs/console.md#open-work): every `unknown` outcome and every recovery item,
// with age and owner, in their one read shapes (lib/schemas/barriers.ts Reconciliation, lib/schemas/recovery.ts).
// Writes and the list queries themselves live in lib/modules/stop/reconciliations.ts and recovery.ts.
import "server-only";
import { prisma } from "../../../platform/db/prisma";
import { authorize } from "../../../platform/auth/authorize";
import type { Principal } from "../../../platform/auth/principal";
import type { Role } from "../../../control/types";
import { consoleTeam } from "../../../platform/auth/console-team";
import type { Reconciliation } from "../../../schemas/barriers";
import type { RecoveryView } from "../../../schemas/recovery";
import { createdAtOrBefore, ownerAssignee, type OpenWorkAge } from "../../../control/open-work";
import { listReconciliations } from "../reconciliations";
import { listRecoveries } from "../recovery";

export interface Member {
  id: string;
  email: string;
  name: string;
  role: Role;
}

/** Rows per list: a filter narrows the query, so a manager reaches anything by filtering. */
const LIMIT = 500;

export interface OpenWorkFilter {
  /** open (default), resolved (reconciled, rolled back or accepted), or all */
  status?: "open" | "resolved" | "all";
  /** "me", "none" or a member's user id (lib/control/open-work.ts) */
  owner?: string;
  age?: OpenWorkAge;
}

/**
 * Open work: the team's reconciliations and recovery items in their one read shapes, each filtered by its
 * module's list query (one query each, so a filter never narrows an already capped list). Unknown outcomes
 * have no due time: "overdue" selects recovery items only.
 */
export async function listOpenWork(
  p: Principal,
  filter: OpenWorkFilter = {},
  now = new Date(),
): Promise<{ reconciliations: Reconciliation[]; recoveries: RecoveryView[] }> {
  consoleTeam(p);
  const status = filter.status ?? "open";
  const age = filter.age ?? "any";
  const assignee = ownerAssignee(filter.owner, p.type === "system" ? null : p.userId);
  const before = createdAtOrBefore(age, now);
  const common = {
    ...(assignee !== undefined ? { assigneeUserId: assignee } : {}),
    ...(before ? { createdAtOrBefore: before } : {}),
    limit: LIMIT,
  };
  const [reconciliations, recoveries] = await Promise.all([
    age === "overdue" ? Promise.resolve([]) : listReconciliations(p, { status, ...common }),
    listRecoveries(p, {
      state: status === "resolved" ? "final" : status,
      ...common,
      ...(age === "overdue" ? { overdueAt: now } : {}),
    }),
  ]);
  return { reconciliations, recoveries };
}

/** The people a manager can hand a reconciliation to: the members of their own team. */
export async function listTeamMembers(p: Principal): Promise<Member[]> {
  authorize(p, "run.read");
  const teamId = consoleTeam(p);
  const rows = await prisma().membership.findMany({ where: { teamId }, include: { user: true }, orderBy: { createdAt: "asc" } });
  return rows.map((m) => ({ id: m.user.id, email: m.user.email, name: m.user.name, role: m.role as Role }));
}
