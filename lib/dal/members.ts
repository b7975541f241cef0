// People administration: change a member's role, remove a member, disable or re-enable a user, end
// every session of a user. Each change is audited in the same transaction that makes it. Removing a
// member, disabling a user and a password change end the user's console sessions (session version),
// effective on their next request; a role change needs no such step because the role is re-read on
// every request anyway. Admins (member.manage) act within their own team; the admin CLI acts as a
// system principal and names the team.
import "server-only";
import { prisma, type Tx } from "../db/prisma";
import { badRequest, notFound, QuiesceError } from "../errors";
import { ROLES, type Role } from "../control/types";
import { appendAudit } from "./audit";
import { actorOf, type Principal } from "./principal";
import { assertTeam, authorize } from "./authorize";

export interface MemberView {
  userId: string;
  email: string;
  name: string;
  role: Role;
  disabled: boolean;
  since: string;
}

/** Ends every console session of the user on its next request. */
export async function endUserSessions(tx: Tx, userId: string): Promise<void> {
  await tx.$executeRawUnsafe(`UPDATE users SET session_version = session_version + 1 WHERE id = $1`, userId);
}

export async function listMembers(p: Principal, teamId: string): Promise<MemberView[]> {
  authorize(p, "member.manage");
  assertTeam(p, teamId, "team");
  const rows = await prisma().membership.findMany({ where: { teamId }, include: { user: true }, orderBy: { createdAt: "asc" } });
  return rows.map((m) => ({
    userId: m.userId,
    email: m.user.email,
    name: m.user.name,
    role: m.role as Role,
    disabled: m.user.disabledAt !== null,
    since: m.createdAt.toISOString(),
  }));
}

async function membershipOrThrow(tx: Tx, teamId: string, userId: string) {
  const m = await tx.membership.findUnique({ where: { teamId_userId: { teamId, userId } } });
  if (!m) throw notFound("member");
  return m;
}

/** The team keeps at least one admin: the last one cannot be demoted or removed. */
async function assertNotLastAdmin(tx: Tx, teamId: string, userId: string): Promise<void> {
  const admins = await tx.membership.findMany({ where: { teamId, role: "admin" }, select: { userId: true } });
  if (admins.length === 1 && admins[0]!.userId === userId)
    throw new QuiesceError("conflict", "the team's last admin cannot be demoted or removed");
}

async function lockTeamMembers(tx: Tx, teamId: string): Promise<void> {
  await tx.$executeRawUnsafe("SELECT pg_advisory_xact_lock(hashtextextended($1, 2))", `members:${teamId}`);
}

export async function setMemberRole(p: Principal, input: { teamId: string; userId: string; role: Role }): Promise<MemberView> {
  authorize(p, "member.manage");
  assertTeam(p, input.teamId, "team");
  if (!(ROLES as readonly string[]).includes(input.role)) throw badRequest(`role: must be one of ${ROLES.join(", ")}`);
  return prisma().$transaction(async (tx) => {
    await lockTeamMembers(tx, input.teamId);
    const m = await membershipOrThrow(tx, input.teamId, input.userId);
    if (m.role !== input.role) {
      if (m.role === "admin") await assertNotLastAdmin(tx, input.teamId, input.userId);
      await tx.membership.update({ where: { id: m.id }, data: { role: input.role } });
      await appendAudit(tx, {
        teamId: input.teamId,
        actor: actorOf(p),
        action: "member.role",
        target: input.userId,
        before: { role: m.role },
        after: { role: input.role },
      });
    }
    const user = await tx.user.findUniqueOrThrow({ where: { id: input.userId } });
    return {
      userId: user.id,
      email: user.email,
      name: user.name,
      role: input.role,
      disabled: user.disabledAt !== null,
      since: m.createdAt.toISOString(),
    };
  });
}

export async function removeMember(p: Principal, input: { teamId: string; userId: string }): Promise<void> {
  authorize(p, "member.manage");
  assertTeam(p, input.teamId, "team");
  await prisma().$transaction(async (tx) => {
    await lockTeamMembers(tx, input.teamId);
    const m = await membershipOrThrow(tx, input.teamId, input.userId);
    if (m.role === "admin") await assertNotLastAdmin(tx, input.teamId, input.userId);
    await tx.membership.delete({ where: { id: m.id } });
    await endUserSessions(tx, input.userId);
    await appendAudit(tx, {
      teamId: input.teamId,
      actor: actorOf(p),
      action: "member.remove",
      target: input.userId,
      before: { role: m.role },
    });
  });
}

/**
 * Disables (or re-enables) a user: no sign-in, every session ends, and their operator keys stop
 * working because a disabled user has no role. An admin may do this to members of their own team.
 */
export async function setUserDisabled(p: Principal, input: { teamId: string; userId: string; disabled: boolean }): Promise<void> {
  authorize(p, "member.manage");
  assertTeam(p, input.teamId, "team");
  if (p.type === "user" && p.userId === input.userId && input.disabled) throw new QuiesceError("conflict", "you cannot disable yourself");
  await prisma().$transaction(async (tx) => {
    await membershipOrThrow(tx, input.teamId, input.userId);
    const user = await tx.user.findUniqueOrThrow({ where: { id: input.userId } });
    if ((user.disabledAt !== null) === input.disabled) return;
    await tx.user.update({ where: { id: input.userId }, data: { disabledAt: input.disabled ? new Date() : null } });
    await endUserSessions(tx, input.userId);
    await appendAudit(tx, {
      teamId: input.teamId,
      actor: actorOf(p),
      action: input.disabled ? "user.disable" : "user.enable",
      target: input.userId,
      before: { disabled: user.disabledAt !== null },
      after: { disabled: input.disabled },
    });
  });
}
