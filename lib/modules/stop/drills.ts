// A team set aside for cancellation drills (`quiesce drill setup`, docs/evals.md): teams.is_drill
// marks it, so its runs, barriers and receipts are known to be rehearsals. System callers only (the
// admin CLI); the change and its audit row commit together.
import "server-only";
import { prisma } from "../../platform/db/prisma";
import { forbidden, notFound } from "../../platform/errors";
import { appendAudit } from "../audit/audit";
import { actorOf, type Principal } from "../../platform/auth/principal";

export async function markDrillTeam(p: Principal, teamId: string): Promise<{ changed: boolean }> {
  if (p.type !== "system") throw forbidden("setting a team aside for drills is for system callers only");
  return prisma().$transaction(async (tx) => {
    const team = await tx.team.findUnique({ where: { id: teamId }, select: { isDrill: true } });
    if (!team) throw notFound("team");
    if (team.isDrill) return { changed: false };
    await tx.team.update({ where: { id: teamId }, data: { isDrill: true } });
    await appendAudit(tx, {
      teamId,
      actor: actorOf(p),
      action: "team.drill",
      target: teamId,
      before: { isDrill: false },
      after: { isDrill: true },
    });
    return { changed: true };
  });
}
