// Read model for the audit log: the team's hash-chained events, newest first, filterable by action,
// actor and target, with a chain check so a reader can see the trail is intact.
import "server-only";
import { prisma } from "../../platform/db/prisma";
import type { Prisma } from "../../generated/prisma/client";
import { verifyAuditChain } from "./audit";
import { authorize } from "../../platform/auth/authorize";
import { escapeLike } from "../../platform/security/text";
import type { Principal } from "../../platform/auth/principal";
import { consoleTeam } from "../../platform/auth/console-team";

export interface AuditRow {
  id: string;
  at: string;
  actor: string;
  action: string;
  target: string;
  before: unknown;
  after: unknown;
  hash: string;
}
export interface AuditPage {
  items: AuditRow[];
  total: number;
  page: number;
  pages: number;
  actions: string[];
}

export async function listConsoleAudit(
  p: Principal,
  filter: { action?: string; actor?: string; target?: string; page?: number },
): Promise<AuditPage> {
  authorize(p, "audit.read");
  const teamId = consoleTeam(p);
  const pageSize = 50;
  const page = Math.max(filter.page ?? 1, 1);
  // The actor column holds ids (user:…, key:…); the page shows e-mails. Either may be typed: an e-mail
  // (or part of one) of a team member also matches that member's rows.
  const byEmail = filter.actor
    ? await prisma().user.findMany({
        where: { email: { contains: escapeLike(filter.actor), mode: "insensitive" }, memberships: { some: { teamId } } },
        select: { id: true },
        take: 50,
      })
    : [];
  const where: Prisma.AuditEventWhereInput = {
    teamId,
    ...(filter.action ? { action: filter.action } : {}),
    ...(filter.actor
      ? {
          OR: [
            { actor: { contains: escapeLike(filter.actor), mode: "insensitive" } },
            ...byEmail.map((u) => ({ actor: { contains: `user:${u.id}` } })),
          ],
        }
      : {}),
    ...(filter.target ? { target: { contains: escapeLike(filter.target), mode: "insensitive" } } : {}),
  };
  const db = prisma();
  const [total, rows, actions] = await Promise.all([
    db.auditEvent.count({ where }),
    db.auditEvent.findMany({ where, orderBy: { id: "desc" }, skip: (page - 1) * pageSize, take: pageSize }),
    db.auditEvent.findMany({ where: { teamId }, distinct: ["action"], select: { action: true }, orderBy: { action: "asc" } }),
  ]);
  return {
    total,
    page,
    pages: Math.max(1, Math.ceil(total / pageSize)),
    actions: actions.map((a) => a.action),
    items: rows.map((r) => ({
      id: r.id.toString(),
      at: r.at.toISOString(),
      actor: r.actor,
      action: r.action,
      target: r.target,
      before: r.before,
      after: r.after,
      hash: r.hash,
    })),
  };
}

/** null when the team's chain verifies; otherwise the id of the first row that does not. */
export async function checkAuditChain(p: Principal): Promise<string | null> {
  authorize(p, "audit.read");
  const broken = await verifyAuditChain(prisma(), consoleTeam(p));
  return broken === null ? null : broken.toString();
}
