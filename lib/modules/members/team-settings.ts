// A team's stop settings (quiet period, pause reclaim, default owner of unknown outcomes). Admins of
// the team (or the system, for the seed and tests) change them; every change is audited. Bad input is
// a 400 naming the field, and nothing is written.
import "server-only";
import { prisma } from "../../platform/db/prisma";
import { badRequest, notFound } from "../../platform/errors";
import { TeamStopSettings } from "../../schemas/team-settings";
import { authorize, assertTeam } from "../../platform/auth/authorize";
import { actorOf, type Principal } from "../../platform/auth/principal";
import { appendAudit } from "../audit/audit";

export interface TeamStopSettingsView {
  teamId: string;
  quietPeriodMs: number;
  pausePolicySeconds: number | null;
  pauseReclaimAction: string;
  defaultReconcilerUserId: string | null;
}

export async function getTeamStopSettings(p: Principal, teamId: string): Promise<TeamStopSettingsView> {
  authorize(p, "run.read");
  assertTeam(p, teamId, "team");
  const t = await prisma().team.findUnique({
    where: { id: teamId },
    select: { id: true, quietPeriodMs: true, pausePolicySeconds: true, pauseReclaimAction: true, defaultReconcilerUserId: true },
  });
  if (!t) throw notFound("team");
  return {
    teamId: t.id,
    quietPeriodMs: t.quietPeriodMs,
    pausePolicySeconds: t.pausePolicySeconds,
    pauseReclaimAction: t.pauseReclaimAction,
    defaultReconcilerUserId: t.defaultReconcilerUserId,
  };
}

export async function setTeamStopSettings(p: Principal, teamId: string, input: unknown): Promise<TeamStopSettingsView> {
  authorize(p, "member.manage");
  assertTeam(p, teamId, "team");
  const parsed = TeamStopSettings.safeParse(input);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw badRequest(`${issue.path.join(".") || "body"}: ${issue.message}`);
  }
  const s = parsed.data;
  return prisma().$transaction(async (tx) => {
    const before = await tx.team.findUnique({
      where: { id: teamId },
      select: { quietPeriodMs: true, pausePolicySeconds: true, defaultReconcilerUserId: true },
    });
    if (!before) throw notFound("team");
    if (s.defaultReconcilerUserId) {
      const m = await tx.membership.findUnique({ where: { teamId_userId: { teamId, userId: s.defaultReconcilerUserId } } });
      if (!m) throw badRequest("defaultReconcilerUserId: not a member of this team");
    }
    const t = await tx.team.update({
      where: { id: teamId },
      data: {
        ...(s.quietPeriodMs !== undefined ? { quietPeriodMs: s.quietPeriodMs } : {}),
        ...(s.pausePolicySeconds !== undefined ? { pausePolicySeconds: s.pausePolicySeconds } : {}),
        ...(s.defaultReconcilerUserId !== undefined ? { defaultReconcilerUserId: s.defaultReconcilerUserId } : {}),
      },
    });
    await appendAudit(tx, { teamId, actor: actorOf(p), action: "team.stop_settings", target: teamId, before, after: s });
    return {
      teamId,
      quietPeriodMs: t.quietPeriodMs,
      pausePolicySeconds: t.pausePolicySeconds,
      pauseReclaimAction: t.pauseReclaimAction,
      defaultReconcilerUserId: t.defaultReconcilerUserId,
    };
  });
}
