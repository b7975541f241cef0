// Read model for the reconciliation queue: every `unknown` outcome with its age, who holds it, and how
// it was resolved, in the one read shape (lib/schemas/barriers.ts, Reconciliation). Writes (assign /
// resolve) and the read itself live in lib/modules/stop/reconciliations.ts.
import "server-only";
import { prisma } from "../../../platform/db/prisma";
import { authorize } from "../../../platform/auth/authorize";
import type { Principal } from "../../../platform/auth/principal";
import type { Role } from "../../../control/types";
import { consoleTeam } from "../../../platform/auth/console-team";
import type { Reconciliation } from "../../../schemas/barriers";
import { listReconciliations } from "../reconciliations";

export interface Member {
  id: string;
  email: string;
  name: string;
  role: Role;
}

/** The queue: the team's reconciliations in the one read shape (the CLI's `reconcile list` reads the same). */
export async function listConsoleReconciliations(
  p: Principal,
  filter: { status?: "open" | "resolved" | "all"; mine?: boolean } = {},
): Promise<Reconciliation[]> {
  consoleTeam(p);
  return listReconciliations(p, {
    status: filter.status ?? "open",
    ...(filter.mine && p.type !== "system" && p.userId ? { assigneeUserId: p.userId } : {}),
    limit: 500,
  });
}

/** The people a manager can hand a reconciliation to: the members of their own team. */
export async function listTeamMembers(p: Principal): Promise<Member[]> {
  authorize(p, "run.read");
  const teamId = consoleTeam(p);
  const rows = await prisma().membership.findMany({ where: { teamId }, include: { user: true }, orderBy: { createdAt: "asc" } });
  return rows.map((m) => ({ id: m.user.id, email: m.user.email, name: m.user.name, role: m.role as Role }));
}
