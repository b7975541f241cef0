// People administration: change a member's role, remove a member, disable or re-enable a membership
// (one team) or a user (every team), end every session of a user. Each change is audited in the same
// transaction that makes it. Removing or disabling a member, disabling a user and a password change
// end the user's console sessions (session version), effective on their next request; a role change
// needs no such step because the role is re-read on every request anyway.
//
// Authority stays inside a team: an admin (member.manage) acts on memberships of their own team; a
// user-wide change (disable everywhere) needs admin of every team the user belongs to, since it takes
// the user out of all of them. Every team keeps at least one active admin. The admin CLI acts as a
// system principal and names the team.
//
// A disabled membership is moved out of `memberships` into `disabled_memberships` (with its role), so
// every reader of roles — sessions, operator keys, the gate's SQL, the key cache's notice — treats it
// as no membership without knowing about it (docs/security/authorization.md#people-administration).
import "server-only";
import { prisma, type Tx } from "../../platform/db/prisma";
import { badRequest, forbidden, notFound, QuiesceError } from "../../platform/errors";
import { ROLES, type Role } from "../../control/types";
import { appendAudit } from "../audit/audit";
import { actorOf, type Principal } from "../../platform/auth/principal";
import { assertTeam, authorize } from "../../platform/auth/authorize";

export interface MemberView {
  userId: string;
  email: string;
  name: string;
  role: Role;
  /** The membership in this team is disabled (the user keeps their other teams). */
  disabled: boolean;
  /** The user is disabled everywhere (no sign-in, no team). */
  userDisabled: boolean;
  since: string;
}

/** Ends every console session of the user on its next request. */
export async function endUserSessions(tx: Tx, userId: string): Promise<void> {
  await tx.$executeRawUnsafe(`UPDATE users SET session_version = session_version + 1 WHERE id = $1`, userId);
}

export async function listMembers(p: Principal, teamId: string): Promise<MemberView[]> {
  authorize(p, "member.manage");
  assertTeam(p, teamId, "team");
  const [active, disabled] = await Promise.all([
    prisma().membership.findMany({ where: { teamId }, include: { user: true } }),
    prisma().disabledMembership.findMany({ where: { teamId }, include: { user: true } }),
  ]);
  const rows = [
    ...active.map((m) => ({ m, since: m.createdAt, disabled: false })),
    ...disabled.map((m) => ({ m, since: m.memberSince, disabled: true })),
  ].sort((a, b) => a.since.getTime() - b.since.getTime());
  return rows.map(({ m, since, disabled }) => ({
    userId: m.userId,
    email: m.user.email,
    name: m.user.name,
    role: m.role as Role,
    disabled,
    userDisabled: m.user.disabledAt !== null,
    since: since.toISOString(),
  }));
}

async function membershipOrThrow(tx: Tx, teamId: string, userId: string) {
  const m = await tx.membership.findUnique({ where: { teamId_userId: { teamId, userId } } });
  if (m) return m;
  const d = await tx.disabledMembership.findUnique({ where: { teamId_userId: { teamId, userId } } });
  if (d) throw new QuiesceError("conflict", "this membership is disabled: enable it first");
  throw notFound("member");
}

/** Active admins: an enabled membership with role admin, of a user who is not disabled. */
async function activeAdmins(tx: Tx, teamId: string): Promise<string[]> {
  const rows = await tx.$queryRawUnsafe<{ user_id: string }[]>(
    `SELECT m.user_id FROM memberships m JOIN users u ON u.id = m.user_id
      WHERE m.team_id = $1 AND m.role = 'admin' AND u.disabled_at IS NULL`,
    teamId,
  );
  return rows.map((r) => r.user_id);
}

/** The team keeps at least one active admin: the last one cannot be demoted, removed or disabled. */
async function assertNotLastAdmin(tx: Tx, teamId: string, userId: string): Promise<void> {
  const admins = await activeAdmins(tx, teamId);
  if (admins.includes(userId) && admins.length === 1)
    throw new QuiesceError("conflict", "a team keeps at least one active admin: this is the last one of the team");
}

/** Serialises people changes per team, so two admins cannot each take away the other's admin. */
async function lockTeamMembers(tx: Tx, teamId: string): Promise<void> {
  await tx.$executeRawUnsafe("SELECT pg_advisory_xact_lock(hashtextextended($1, 2))", `members:${teamId}`);
}

function actingUser(p: Principal): string | null {
  return p.type === "user" ? p.userId : p.type === "key" ? p.userId : null;
}

/** The teams (of `teamIds`) where the acting person is an active admin right now, read under the teams' locks. */
async function actorAdminOf(tx: Tx, p: Principal, teamIds: string[]): Promise<Set<string>> {
  if (p.type === "system") return new Set(teamIds);
  const actor = actingUser(p);
  if (!actor) return new Set();
  const rows = await tx.$queryRawUnsafe<{ team_id: string }[]>(
    `SELECT m.team_id FROM memberships m JOIN users u ON u.id = m.user_id
      WHERE m.user_id = $1 AND m.team_id = ANY($2::text[]) AND m.role = 'admin' AND u.disabled_at IS NULL`,
    actor,
    teamIds,
  );
  return new Set(rows.map((r) => r.team_id));
}

/**
 * The principal was resolved when the request began; an admin taken out meanwhile (demoted, disabled,
 * removed by another admin racing them) acts no more.
 */
async function assertActorStillAdmin(tx: Tx, p: Principal, teamId: string): Promise<void> {
  if (!(await actorAdminOf(tx, p, [teamId])).has(teamId)) throw forbidden("you are no longer an admin of this team");
}

export async function setMemberRole(p: Principal, input: { teamId: string; userId: string; role: Role }): Promise<MemberView> {
  authorize(p, "member.manage");
  assertTeam(p, input.teamId, "team");
  if (!(ROLES as readonly string[]).includes(input.role)) throw badRequest(`role: must be one of ${ROLES.join(", ")}`);
  return prisma().$transaction(async (tx) => {
    await lockTeamMembers(tx, input.teamId);
    await assertActorStillAdmin(tx, p, input.teamId);
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
      disabled: false,
      userDisabled: user.disabledAt !== null,
      since: m.createdAt.toISOString(),
    };
  });
}

/** Removes a membership, enabled or disabled. */
export async function removeMember(p: Principal, input: { teamId: string; userId: string }): Promise<void> {
  authorize(p, "member.manage");
  assertTeam(p, input.teamId, "team");
  await prisma().$transaction(async (tx) => {
    await lockTeamMembers(tx, input.teamId);
    await assertActorStillAdmin(tx, p, input.teamId);
    const where = { teamId_userId: { teamId: input.teamId, userId: input.userId } };
    const m = await tx.membership.findUnique({ where });
    const d = m ? null : await tx.disabledMembership.findUnique({ where });
    if (!m && !d) throw notFound("member");
    if (m) {
      await assertNotLastAdmin(tx, input.teamId, input.userId);
      await tx.membership.delete({ where: { id: m.id } });
    } else await tx.disabledMembership.delete({ where: { id: d!.id } });
    await endUserSessions(tx, input.userId);
    await appendAudit(tx, {
      teamId: input.teamId,
      actor: actorOf(p),
      action: "member.remove",
      target: input.userId,
      before: { role: (m ?? d)!.role, ...(d ? { disabled: true } : {}) },
    });
  });
}

/**
 * Disables (or re-enables) a user's membership in one team: they lose that team only — its pages, its
 * data, their operator keys' role there — and keep every other team. Their console sessions end (as
 * removal does); signing in again reaches their other teams. The team's last active admin cannot be
 * disabled, nor can an admin disable themself.
 */
export async function setMembershipDisabled(p: Principal, input: { teamId: string; userId: string; disabled: boolean }): Promise<void> {
  authorize(p, "member.manage");
  assertTeam(p, input.teamId, "team");
  if (input.disabled && actingUser(p) === input.userId) throw new QuiesceError("conflict", "you cannot disable yourself");
  await prisma().$transaction(async (tx) => {
    await lockTeamMembers(tx, input.teamId);
    await assertActorStillAdmin(tx, p, input.teamId);
    const where = { teamId_userId: { teamId: input.teamId, userId: input.userId } };
    const [m, d] = await Promise.all([tx.membership.findUnique({ where }), tx.disabledMembership.findUnique({ where })]);
    if (!m && !d) throw notFound("member");
    if (input.disabled) {
      if (!m) return;
      await assertNotLastAdmin(tx, input.teamId, input.userId);
      await tx.membership.delete({ where: { id: m.id } });
      await tx.disabledMembership.create({
        data: { id: m.id, teamId: m.teamId, userId: m.userId, role: m.role, memberSince: m.createdAt, disabledBy: actorOf(p) },
      });
      await endUserSessions(tx, input.userId);
    } else {
      if (!d) return;
      await tx.disabledMembership.delete({ where: { id: d.id } });
      await tx.membership.create({ data: { id: d.id, teamId: d.teamId, userId: d.userId, role: d.role, createdAt: d.memberSince } });
    }
    await appendAudit(tx, {
      teamId: input.teamId,
      actor: actorOf(p),
      action: input.disabled ? "member.disable" : "member.enable",
      target: input.userId,
      before: { disabled: !input.disabled, role: (m ?? d)!.role },
      after: { disabled: input.disabled },
    });
  });
}

/** Every team the user belongs to, enabled or disabled, in a fixed order (the order locks are taken). */
async function teamsOfUser(tx: Tx, userId: string): Promise<string[]> {
  const rows = await tx.$queryRawUnsafe<{ team_id: string }[]>(
    `SELECT team_id FROM memberships WHERE user_id = $1 UNION SELECT team_id FROM disabled_memberships WHERE user_id = $1 ORDER BY 1`,
    userId,
  );
  return rows.map((r) => r.team_id);
}

/**
 * Disables (or re-enables) a user everywhere: no sign-in, every session ends, and their operator keys
 * stop working because a disabled user has no role. Since that takes them out of every team, a person
 * may do it only as an admin of every team the user belongs to (otherwise: disable the membership);
 * no team may be left without an active admin. Audited in each of the user's teams.
 */
export async function setUserDisabled(p: Principal, input: { userId: string; disabled: boolean }): Promise<void> {
  authorize(p, "member.manage");
  const actor = actingUser(p);
  if (input.disabled && actor === input.userId) throw new QuiesceError("conflict", "you cannot disable yourself");
  await prisma().$transaction(async (tx) => {
    const seen = await teamsOfUser(tx, input.userId);
    // Another team's user answers exactly like a missing one.
    if (p.type !== "system" && !seen.includes(p.teamId)) throw notFound("member");
    for (const t of seen) await lockTeamMembers(tx, t);
    const teams = await teamsOfUser(tx, input.userId);
    if (teams.join() !== seen.join()) throw new QuiesceError("conflict", "the user's teams changed meanwhile: try again");
    const user = await tx.user.findUnique({ where: { id: input.userId } });
    if (!user) throw notFound("user");
    if ((await actorAdminOf(tx, p, teams)).size !== teams.length)
      throw forbidden(
        `${user.email} also belongs to teams you are not an admin of: disable their membership in this team instead, or ask an admin of every team`,
      );
    if ((user.disabledAt !== null) === input.disabled) return;
    if (input.disabled) for (const t of teams) await assertNotLastAdmin(tx, t, input.userId);
    await tx.user.update({ where: { id: input.userId }, data: { disabledAt: input.disabled ? new Date() : null } });
    await endUserSessions(tx, input.userId);
    for (const teamId of teams.length ? teams : [null])
      await appendAudit(tx, {
        teamId,
        actor: actorOf(p),
        action: input.disabled ? "user.disable" : "user.enable",
        target: input.userId,
        before: { disabled: user.disabledAt !== null },
        after: { disabled: input.disabled },
      });
  });
}
