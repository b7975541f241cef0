// Small counts for the navigation bar.
import "server-only";
import { prisma } from "../../../platform/db/prisma";
import { authorize } from "../../../platform/auth/authorize";
import type { Principal } from "../../../platform/auth/principal";
import { consoleTeam } from "../../../platform/auth/console-team";
import { OPEN_RECONCILIATION_STATUSES } from "../../../control/reconciliation";

export async function countOpenReconciliations(p: Principal): Promise<number> {
  authorize(p, "run.read");
  return prisma().reconciliation.count({ where: { teamId: consoleTeam(p), status: { in: [...OPEN_RECONCILIATION_STATUSES] } } });
}
