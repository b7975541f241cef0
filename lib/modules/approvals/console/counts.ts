// The navigation's count of open approvals (pending and still in time), as listApprovals' `open` reads them.
import "server-only";
import { prisma } from "../../../platform/db/prisma";
import { authorize } from "../../../platform/auth/authorize";
import type { Principal } from "../../../platform/auth/principal";
import { consoleTeam } from "../../../platform/auth/console-team";

export async function countOpenApprovals(p: Principal): Promise<number> {
  authorize(p, "run.read");
  return prisma().approval.count({ where: { teamId: consoleTeam(p), state: "pending", expiresAt: { gt: new Date() } } });
}
