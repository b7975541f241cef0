// Open work's counts (docs/console.md#open-work): the navigation's badge and the page's header read this
// one function, so the two never disagree.
import "server-only";
import { prisma } from "../../../platform/db/prisma";
import { authorize } from "../../../platform/auth/authorize";
import type { Principal } from "../../../platform/auth/principal";
import { consoleTeam } from "../../../platform/auth/console-team";
import { OPEN_RECONCILIATION_STATUSES } from "../../../control/reconciliation";
import { UNSETTLED_RECOVERY_STATES } from "../../../control/recovery";
import type { OpenWorkCounts, OwnerSplit } from "../../../control/open-work";

/** A list's total and who holds its items, from one count per holder. */
function split(groups: { assigneeUserId: string | null; _count: { _all: number } }[], me: string | null): [number, OwnerSplit] {
  const of = (u: string | null) => groups.find((g) => g.assigneeUserId === u)?._count._all ?? 0;
  return [groups.reduce((sum, g) => sum + g._count._all, 0), { mine: me ? of(me) : 0, nobody: of(null) }];
}

/**
 * The team's open unknowns, recovery items still owed, and those of them past due — whatever the page's
 * filters — and who holds them. The totals and the split come from the same rows, so they always add up.
 */
export async function countOpenWork(p: Principal, now = new Date()): Promise<OpenWorkCounts> {
  authorize(p, "run.read");
  const teamId = consoleTeam(p);
  const me = p.type === "user" || p.type === "key" ? p.userId : null;
  const owed = { teamId, state: { in: [...UNSETTLED_RECOVERY_STATES] } };
  const count = { _count: { _all: true } } as const;
  const [unknownGroups, recoveryGroups, overdue] = await Promise.all([
    prisma().reconciliation.groupBy({
      by: ["assigneeUserId"],
      where: { teamId, status: { in: [...OPEN_RECONCILIATION_STATUSES] } },
      ...count,
    }),
    prisma().recoveryItem.groupBy({ by: ["assigneeUserId"], where: owed, ...count }),
    prisma().recoveryItem.count({ where: { ...owed, dueAt: { lte: now } } }),
  ]);
  const [unknowns, heldUnknowns] = split(unknownGroups, me);
  const [recoveries, heldRecoveries] = split(recoveryGroups, me);
  return { unknowns, recoveries, overdue, held: { unknowns: heldUnknowns, recoveries: heldRecoveries } };
}
