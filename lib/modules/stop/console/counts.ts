// Open work's counts (docs/console.md#open-work): the navigation's badge and the page's header read this
// one function, so the two never disagree.
import "server-only";
import { prisma } from "../../../platform/db/prisma";
import { authorize } from "../../../platform/auth/authorize";
import type { Principal } from "../../../platform/auth/principal";
import { consoleTeam } from "../../../platform/auth/console-team";
import { OPEN_RECONCILIATION_STATUSES } from "../../../control/reconciliation";
import { UNSETTLED_RECOVERY_STATES } from "../../../control/recovery";
import type { OpenWorkCounts } from "../../../control/open-work";

/** The team's open unknowns, recovery items still owed, and those of them past due — whatever the page's filters. */
export async function countOpenWork(p: Principal, now = new Date()): Promise<OpenWorkCounts> {
  authorize(p, "run.read");
  const teamId = consoleTeam(p);
  const owed = { teamId, state: { in: [...UNSETTLED_RECOVERY_STATES] } };
  const [unknowns, recoveries, overdue] = await Promise.all([
    prisma().reconciliation.count({ where: { teamId, status: { in: [...OPEN_RECONCILIATION_STATUSES] } } }),
    prisma().recoveryItem.count({ where: owed }),
    prisma().recoveryItem.count({ where: { ...owed, dueAt: { lte: now } } }),
  ]);
  return { unknowns, recoveries, overdue };
}
