// Tenancy bootstrap for trusted in-process callers: `quiesce seed`, `npm start` and the admin CLI
// (`keys create --team <slug> --user <email>`). Only a system principal may call these: the console
// and the API manage members through their own authorized paths. Every "ensure" is idempotent
// (it creates what is missing and changes nothing that exists), and each creation commits with its
// audit row in one transaction.
import "server-only";
import { prisma } from "../../platform/db/prisma";
import { newId } from "../../platform/ids";
import { forbidden } from "../../platform/errors";
import type { Role } from "../../control/types";
import { appendAudit } from "../audit/audit";
import { endUserSessions } from "./members";
import { actorOf, type Principal } from "../../platform/auth/principal";

export interface TeamRow {
  id: string;
  slug: string;
  name: string;
}
export interface UserRow {
  id: string;
  email: string;
  name: string;
  passwordHash: string | null;
}

function requireSystem(p: Principal): void {
  if (p.type !== "system") throw forbidden("tenancy bootstrap is for system callers only");
}

export async function findTeamBySlug(p: Principal, slug: string): Promise<TeamRow | null> {
  requireSystem(p);
  return prisma().team.findUnique({ where: { slug }, select: { id: true, slug: true, name: true } });
}

export async function findUserByEmail(p: Principal, email: string): Promise<UserRow | null> {
  requireSystem(p);
  return prisma().user.findUnique({
    where: { email: email.trim().toLowerCase() },
    select: { id: true, email: true, name: true, passwordHash: true },
  });
}

export async function ensureTeam(p: Principal, input: { slug: string; name: string }): Promise<{ team: TeamRow; created: boolean }> {
  requireSystem(p);
  const existing = await findTeamBySlug(p, input.slug);
  if (existing) return { team: existing, created: false };
  return prisma().$transaction(async (tx) => {
    // ON CONFLICT: two first starts racing on one database must not fail or duplicate the team.
    const id = newId("team");
    const inserted = await tx.$queryRawUnsafe<TeamRow[]>(
      `INSERT INTO teams (id, slug, name) VALUES ($1, $2, $3) ON CONFLICT (slug) DO NOTHING RETURNING id, slug, name`,
      id,
      input.slug,
      input.name,
    );
    if (inserted.length === 0) {
      const team = await tx.team.findUniqueOrThrow({ where: { slug: input.slug }, select: { id: true, slug: true, name: true } });
      return { team, created: false };
    }
    await appendAudit(tx, {
      teamId: id,
      actor: actorOf(p),
      action: "team.create",
      target: id,
      after: { slug: input.slug, name: input.name },
    });
    return { team: inserted[0]!, created: true };
  });
}

export async function ensureUser(
  p: Principal,
  input: { email: string; name: string; passwordHash: string | null },
): Promise<{ user: UserRow; created: boolean }> {
  requireSystem(p);
  const email = input.email.trim().toLowerCase();
  const existing = await findUserByEmail(p, email);
  if (existing) return { user: existing, created: false };
  return prisma().$transaction(async (tx) => {
    const id = newId("user");
    const inserted = await tx.$queryRawUnsafe<{ id: string }[]>(
      `INSERT INTO users (id, email, name, password_hash) VALUES ($1, $2, $3, $4) ON CONFLICT (email) DO NOTHING RETURNING id`,
      id,
      email,
      input.name,
      input.passwordHash,
    );
    const user = await tx.user.findUniqueOrThrow({ where: { email }, select: { id: true, email: true, name: true, passwordHash: true } });
    if (inserted.length === 0) return { user, created: false };
    await appendAudit(tx, { teamId: null, actor: actorOf(p), action: "user.create", target: id, after: { email, name: input.name } });
    return { user, created: true };
  });
}

/** Replaces a user's console password hash (seed with an explicit QUIESCE_DEMO_PASSWORD). */
export async function setUserPasswordHash(p: Principal, userId: string, passwordHash: string): Promise<void> {
  requireSystem(p);
  await prisma().$transaction(async (tx) => {
    await tx.user.update({ where: { id: userId }, data: { passwordHash } });
    // A password change ends every session of the user.
    await endUserSessions(tx, userId);
    await appendAudit(tx, { teamId: null, actor: actorOf(p), action: "user.password_set", target: userId });
  });
}

/** Adds the membership when missing; an existing membership keeps its role (the seed never demotes) and a disabled one stays disabled. */
export async function ensureMembership(
  p: Principal,
  input: { teamId: string; userId: string; role: Role },
): Promise<{ role: Role; created: boolean }> {
  requireSystem(p);
  return prisma().$transaction(async (tx) => {
    // A membership an admin disabled stays disabled: only enabling it (lib/modules/members/members.ts) brings it back.
    const disabled = await tx.disabledMembership.findUnique({ where: { teamId_userId: { teamId: input.teamId, userId: input.userId } } });
    if (disabled) return { role: disabled.role as Role, created: false };
    const inserted = await tx.$queryRawUnsafe<{ id: string }[]>(
      `INSERT INTO memberships (id, team_id, user_id, role) VALUES ($1, $2, $3, $4::"Role")
       ON CONFLICT (team_id, user_id) DO NOTHING RETURNING id`,
      newId("mem"),
      input.teamId,
      input.userId,
      input.role,
    );
    if (inserted.length === 0) {
      const m = await tx.membership.findUniqueOrThrow({ where: { teamId_userId: { teamId: input.teamId, userId: input.userId } } });
      return { role: m.role as Role, created: false };
    }
    await appendAudit(tx, {
      teamId: input.teamId,
      actor: actorOf(p),
      action: "member.add",
      target: input.userId,
      after: { role: input.role },
    });
    return { role: input.role, created: true };
  });
}
