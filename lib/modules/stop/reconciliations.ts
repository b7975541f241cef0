// Reconciliations: an `unknown` outcome handed to a named person (docs/architecture.md#, #the-cancellation-barrier;
// docs/ideas.md#barriers: "Keep
// the barrier open and assign reconciliation to a person"). Managers/admins assign; the assignee (or
// a manager/admin) resolves with evidence. Either write re-issues the barrier's receipt as a new
// version when one was already issued (the old versions stay readable).
import "server-only";
import { prisma } from "../../platform/db/prisma";
import { query, sql } from "../../platform/db/sql";
import { badRequest, forbidden, notFound, QuiesceError } from "../../platform/errors";
import type { Role } from "../../control/types";
import { authorize, assertTeam } from "../../platform/auth/authorize";
import { actorOf, type Principal } from "../../platform/auth/principal";
import { appendAudit } from "../audit/audit";
import { notifyControl } from "../../platform/db/notify";
import { settleTx, whyUnknownTx } from "./settlements";
import type { issueReceiptTx } from "./internal/receipts";
import { lockBarrierTx, reissueCoveringTx } from "./internal/receipts";
import { emitEventTx } from "../webhooks/emit";
import { coveringBarriersTx } from "./internal/evidence";
import { mayResolveReconciliation, OPEN_RECONCILIATION_STATUSES, type ReconciliationStatus } from "../../control/reconciliation";
import type { Reconciliation, ResolveReconciliationInput } from "../../schemas/barriers";
import { jobUrlKey, RECONCILIATION_INCLUDE, toReconciliation } from "./internal/read-shapes";

type Row = NonNullable<Awaited<ReturnType<typeof loadRow>>>;
function loadRow(id: string) {
  return prisma().reconciliation.findUnique({ where: { id }, include: RECONCILIATION_INCLUDE });
}

async function toViews(rows: Row[]): Promise<Reconciliation[]> {
  const ids = [...new Set(rows.map((r) => r.assigneeUserId).filter((x): x is string => !!x))];
  const names = [...new Set(rows.map((r) => r.operation.providerName).filter((x): x is string => !!x))];
  const unsettled = [...new Set(rows.filter((r) => !r.settlement).map((r) => r.operation.runId))];
  const [users, providers, covering] = await Promise.all([
    ids.length ? prisma().user.findMany({ where: { id: { in: ids } }, select: { id: true, email: true, name: true } }) : [],
    names.length
      ? prisma().provider.findMany({
          where: { teamId: { in: [...new Set(rows.map((r) => r.teamId))] }, name: { in: names } },
          select: { teamId: true, name: true, jobUrl: true },
        })
      : [],
    // An unknown no barrier settled is still listed by every barrier over its run (the newest is the one to read).
    unsettled.length
      ? query<{ run_id: string; barrier_id: string }>(
          sql`SELECT DISTINCT ON (r.id) r.id AS run_id, b.id AS barrier_id
                FROM runs r JOIN barriers b ON b.run_id = ANY (r.path)
               WHERE r.id = ANY (${unsettled}::text[])
               ORDER BY r.id, b.requested_at DESC, b.id DESC`,
        )
      : [],
  ]);
  const people = new Map(users.map((u) => [u.id, u]));
  // Operations name their provider: whether Quiesce can ask it (the evidence's words for an unknown) and its job
  // page (when it has one), the link a person checks.
  const known = new Set(providers.map((x) => jobUrlKey(x.teamId, x.name)));
  const jobUrls = new Map(providers.filter((x) => x.jobUrl).map((x) => [jobUrlKey(x.teamId, x.name), x.jobUrl!]));
  const barrierOf = new Map(covering.map((x) => [x.run_id, x.barrier_id]));
  return rows.map((r) =>
    toReconciliation(r, {
      people,
      jobUrls,
      hasProvider: (x) => !!x.operation.providerName && known.has(jobUrlKey(x.teamId, x.operation.providerName)),
      coveringBarrier: (x) => barrierOf.get(x.operation.runId) ?? null,
    }),
  );
}

export interface ReconciliationFilter {
  teamId?: string;
  status?: "open" | "all" | ReconciliationStatus;
  barrierId?: string;
  /** null: nobody holds it */
  assigneeUserId?: string | null;
  /** opened at or before this time (the console's age filter) */
  createdAtOrBefore?: Date;
  limit?: number;
}

export async function listReconciliations(p: Principal, filter: ReconciliationFilter = {}): Promise<Reconciliation[]> {
  authorize(p, "run.read");
  const teamId = p.type === "system" ? filter.teamId : p.teamId;
  const status = filter.status ?? "open";
  // A barrier's unknowns: those it settled, and those no barrier settled under its run (it lists them too).
  const under = filter.barrierId ? await prisma().barrier.findUnique({ where: { id: filter.barrierId }, select: { runId: true } }) : null;
  const rows = await prisma().reconciliation.findMany({
    where: {
      ...(teamId ? { teamId } : {}),
      ...(status === "open" ? { status: { in: [...OPEN_RECONCILIATION_STATUSES] } } : status === "all" ? {} : { status }),
      ...(filter.barrierId
        ? {
            OR: [
              { settlement: { barrierId: filter.barrierId } },
              ...(under ? [{ settlementId: null, operation: { run: { path: { has: under.runId } } } }] : []),
            ],
          }
        : {}),
      ...(filter.assigneeUserId !== undefined ? { assigneeUserId: filter.assigneeUserId } : {}),
      ...(filter.createdAtOrBefore ? { createdAt: { lte: filter.createdAtOrBefore } } : {}),
    },
    include: RECONCILIATION_INCLUDE,
    orderBy: { createdAt: "asc" },
    take: Math.min(Math.max(filter.limit ?? 200, 1), 1000),
  });
  return toViews(rows);
}

export async function getReconciliation(p: Principal, id: string): Promise<Reconciliation> {
  authorize(p, "run.read");
  const r = await loadRow(id);
  if (!r) throw notFound("reconciliation");
  assertTeam(p, r.teamId, "reconciliation");
  return (await toViews([r]))[0]!;
}

function userIdOf(p: Principal): string | null {
  return p.type === "user" ? p.userId : p.type === "key" ? p.userId : null;
}
function roleOf(p: Principal): Role | null {
  return p.type === "user" ? p.role : p.type === "key" ? p.role : null;
}

/**
 * A reconciliation write changes what the receipts of every barrier above the operation must say: each
 * that already issued one issues the next version. Locks every covering barrier first (oldest first,
 * the order late reports and the engine use too). Returns the version of the barrier that settled the
 * operation (else the newest barrier's), or null when none had issued a receipt yet.
 */
async function lockCovering(tx: Parameters<typeof issueReceiptTx>[0], runId: string): Promise<void> {
  for (const b of await coveringBarriersTx(tx, runId)) await lockBarrierTx(tx, b.id);
}
async function reissue(
  tx: Parameters<typeof issueReceiptTx>[0],
  runId: string,
  ownBarrierId: string | null,
  actor: string,
): Promise<number | null> {
  const issued = await reissueCoveringTx(tx, runId, actor);
  return (issued.find((x) => x.barrierId === ownBarrierId) ?? issued.at(-1))?.version ?? null;
}

export async function assignReconciliation(
  p: Principal,
  id: string,
  assigneeUserId: string,
): Promise<Reconciliation & { receiptVersion: number | null }> {
  authorize(p, "reconciliation.assign");
  const r = await loadRow(id);
  if (!r) throw notFound("reconciliation");
  assertTeam(p, r.teamId, "reconciliation");
  if (!assigneeUserId?.trim()) throw badRequest("assigneeUserId: required");
  const member = await prisma().membership.findUnique({ where: { teamId_userId: { teamId: r.teamId, userId: assigneeUserId } } });
  if (!member) throw badRequest("assigneeUserId: not a member of this team");
  const barrierId = r.settlement?.barrierId ?? null;
  const receiptVersion = await prisma().$transaction(async (tx) => {
    await lockCovering(tx, r.operation.runId);
    const cur = await tx.reconciliation.findUniqueOrThrow({ where: { id } });
    if (cur.status === "resolved") throw new QuiesceError("conflict", "reconciliation already resolved");
    const at = new Date();
    await tx.reconciliation.update({ where: { id }, data: { assigneeUserId, assignedBy: actorOf(p), assignedAt: at, status: "assigned" } });
    await appendAudit(tx, {
      teamId: r.teamId,
      actor: actorOf(p),
      action: "reconciliation.assign",
      target: id,
      before: { assigneeUserId: cur.assigneeUserId, status: cur.status },
      after: { assigneeUserId, status: "assigned" },
    });
    await emitEventTx(tx, {
      teamId: r.teamId,
      type: "reconciliation.assigned",
      runId: r.operation.runId,
      subject: id,
      data: {
        reconciliation_id: id,
        operation_id: r.operation.operationId,
        assignee_user_id: assigneeUserId,
        by: actorOf(p),
        barrier_id: barrierId,
      },
    });
    const version = await reissue(tx, r.operation.runId, barrierId, actorOf(p));
    const root = await tx.run.findUniqueOrThrow({ where: { id: r.operation.runId }, select: { rootRunId: true } });
    await notifyControl(tx, { kind: "settlement", teamId: r.teamId, rootRunId: root.rootRunId, ...(barrierId ? { barrierId } : {}) });
    return version;
  });
  return { ...(await getReconciliation({ type: "system", name: "reconciliation" }, id)), receiptVersion };
}

export async function resolveReconciliation(
  p: Principal,
  id: string,
  input: ResolveReconciliationInput,
): Promise<Reconciliation & { receiptVersion: number | null }> {
  authorize(p, "reconciliation.resolve");
  const r = await loadRow(id);
  if (!r) throw notFound("reconciliation");
  assertTeam(p, r.teamId, "reconciliation");
  if (input.resolution !== "effect_present" && input.resolution !== "effect_absent")
    throw badRequest("resolution: effect_present or effect_absent");
  const evidence = typeof input.evidence === "string" ? input.evidence.trim() : JSON.stringify(input.evidence ?? null);
  if (!evidence || evidence === "null" || evidence === "{}") throw badRequest("evidence: required");
  const role = roleOf(p);
  if (p.type !== "system" && !mayResolveReconciliation({ role, userId: userIdOf(p) }, r.assigneeUserId)) {
    throw forbidden("only the assignee or a manager/admin may resolve this reconciliation");
  }
  const op = r.operation;
  const barrierId = r.settlement?.barrierId ?? null;
  const receiptVersion = await prisma().$transaction(async (tx) => {
    await lockCovering(tx, op.runId);
    const cur = await tx.reconciliation.findUniqueOrThrow({ where: { id } });
    if (cur.status === "resolved") throw new QuiesceError("conflict", "reconciliation already resolved");
    const at = new Date();
    const actor = actorOf(p);
    // Kept: re-settling below overwrites the reasons the "why unknown" is made of.
    const unknownReason = await whyUnknownTx(tx, op.id);
    await tx.reconciliation.update({
      where: { id },
      data: { status: "resolved", resolution: input.resolution, evidence, resolvedAt: at, resolvedBy: actor, unknownReason },
    });
    const provider = op.providerName
      ? await tx.provider.findUnique({ where: { teamId_name: { teamId: r.teamId, name: op.providerName } } })
      : null;
    const present = input.resolution === "effect_present";
    await settleTx(tx, {
      settlementId: r.settlementId,
      operationRowId: op.id,
      teamId: r.teamId,
      at,
      onlyIfPending: false,
      resolvedBy: actor,
      state: present ? "completed_and_verified" : "cancelled_without_effect",
      reason: `reconciled by ${actor}: ${input.resolution}`,
      ...(present
        ? {
            effect: {
              providerOperationId: op.providerJobId,
              committedAt: at,
              detail: { evidence, recorded: "at reconciliation; the commit time is unknown" },
              rollbackOwner: provider?.rollbackOwner ?? null,
              source: "reconciliation" as const,
            },
          }
        : {}),
    });
    await appendAudit(tx, {
      teamId: r.teamId,
      actor,
      action: "reconciliation.resolve",
      target: id,
      before: { status: cur.status },
      after: { status: "resolved", resolution: input.resolution, evidence },
    });
    await emitEventTx(tx, {
      teamId: r.teamId,
      type: "reconciliation.resolved",
      runId: op.runId,
      subject: id,
      data: { reconciliation_id: id, operation_id: op.operationId, resolution: input.resolution, by: actor, barrier_id: barrierId },
    });
    const version = await reissue(tx, op.runId, barrierId, actor);
    const root = await tx.run.findUniqueOrThrow({ where: { id: op.runId }, select: { rootRunId: true } });
    await notifyControl(tx, { kind: "settlement", teamId: r.teamId, rootRunId: root.rootRunId, ...(barrierId ? { barrierId } : {}) });
    return version;
  });
  return { ...(await getReconciliation({ type: "system", name: "reconciliation" }, id)), receiptVersion };
}

/**
 * For the CLI (`reconcile|recovery … --as <email>`): the member of the work's team with that email,
 * as a user principal carrying their CURRENT role. System principals only.
 */
export async function memberPrincipal(p: Principal, email: string, workId: string): Promise<Principal> {
  if (p.type !== "system") throw forbidden("system only");
  // Open work is a reconciliation of an unknown outcome or a recovery item of a completed effect.
  const r =
    (await prisma().reconciliation.findUnique({ where: { id: workId }, select: { teamId: true } })) ??
    (await prisma().recoveryItem.findUnique({ where: { id: workId }, select: { teamId: true } }));
  if (!r) throw notFound(workId.startsWith("rcv_") ? "recovery item" : "reconciliation");
  const user =
    (await prisma().user.findUnique({ where: { email: email.trim().toLowerCase() } })) ??
    (await prisma().user.findUnique({ where: { email: email.trim() } }));
  const m = user ? await prisma().membership.findUnique({ where: { teamId_userId: { teamId: r.teamId, userId: user.id } } }) : null;
  if (!user || !m) throw badRequest(`--as: ${email} is not a member of its team`);
  return { type: "user", userId: user.id, email: user.email, teamId: r.teamId, role: m.role };
}

export async function userIdForEmail(p: Principal, email: string): Promise<string> {
  if (p.type !== "system") throw forbidden("system only");
  const user =
    (await prisma().user.findUnique({ where: { email: email.trim().toLowerCase() } })) ??
    (await prisma().user.findUnique({ where: { email: email.trim() } }));
  if (!user) throw badRequest(`--to: no user ${email}`);
  return user.id;
}
