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

export interface ProviderInput {
  teamId: string;
  name: string;
  kind: string;
  cancelUrl: string | null;
  statusUrl: string | null;
  /** Where to ask the provider to undo a completed effect (recovery); none: a person records it. */
  compensateUrl?: string | null;
  quietPeriodSeconds: number;
  rollbackOwner: string | null;
  /**
   * An existing row whose cancel/status URLs differ is pointed at these (audited as provider.update).
   * For the seeded simulated provider, whose port is a setting (QUIESCE_PROVIDER_SIM_PORT): the demo
   * keeps working when the port changes between starts. Otherwise an existing row is left as configured.
   */
  updateUrls?: boolean;
}

/** Adds the provider row when the team has none of that name; an existing row is left as configured. */
export async function ensureProvider(p: Principal, input: ProviderInput): Promise<{ id: string; created: boolean; updated: boolean }> {
  requireSystem(p);
  return prisma().$transaction(async (tx) => {
    const id = newId("prov");
    const inserted = await tx.$queryRawUnsafe<{ id: string }[]>(
      `INSERT INTO providers (id, team_id, name, kind, cancel_url, status_url, quiet_period_seconds, rollback_owner, compensate_url)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT (team_id, name) DO NOTHING RETURNING id`,
      id,
      input.teamId,
      input.name,
      input.kind,
      input.cancelUrl,
      input.statusUrl,
      input.quietPeriodSeconds,
      input.rollbackOwner,
      input.compensateUrl ?? null,
    );
    if (inserted.length === 0) {
      const row = await tx.provider.findUniqueOrThrow({
        where: { teamId_name: { teamId: input.teamId, name: input.name } },
        select: { id: true, cancelUrl: true, statusUrl: true, compensateUrl: true },
      });
      const compensateUrl = input.compensateUrl ?? null;
      if (
        !input.updateUrls ||
        (row.cancelUrl === input.cancelUrl && row.statusUrl === input.statusUrl && row.compensateUrl === compensateUrl)
      )
        return { id: row.id, created: false, updated: false };
      await tx.provider.update({ where: { id: row.id }, data: { cancelUrl: input.cancelUrl, statusUrl: input.statusUrl, compensateUrl } });
      await appendAudit(tx, {
        teamId: input.teamId,
        actor: actorOf(p),
        action: "provider.update",
        target: row.id,
        before: { cancelUrl: row.cancelUrl, statusUrl: row.statusUrl, compensateUrl: row.compensateUrl },
        after: { cancelUrl: input.cancelUrl, statusUrl: input.statusUrl, compensateUrl },
      });
      return { id: row.id, created: false, updated: true };
    }
    await appendAudit(tx, {
      teamId: input.teamId,
      actor: actorOf(p),
      action: "provider.create",
      target: id,
      after: {
        name: input.name,
        kind: input.kind,
        cancelUrl: input.cancelUrl,
        statusUrl: input.statusUrl,
        compensateUrl: input.compensateUrl ?? null,
        quietPeriodSeconds: input.quietPeriodSeconds,
        rollbackOwner: input.rollbackOwner,
      },
    });
    return { id, created: true, updated: false };
  });
}
