// Approvals (docs/policies.md#approvals): the gate creates one when a rule requires a person's yes for a call, bound
// to that call. People answer here; a pause, kill, fleet stop, epoch change or lease revocation voids the open
// ones at once (a trigger, quiesce_void_approvals); the sweep expires them, voids those whose lease lapsed, and
// announces new ones (webhook + CloudEvent `approval.requested`) so chat tools can relay the card.
import "server-only";
import { prisma } from "../../platform/db/prisma";
import { badRequest, forbidden, notFound, QuiesceError } from "../../platform/errors";
import { authorize, teamOf } from "../../platform/auth/authorize";
import { actorOf, type Principal } from "../../platform/auth/principal";
import { notifyControl } from "../../platform/db/notify";
import { appendAudit } from "../audit/audit";
import { emitEventsTx, emitEventTx } from "../webhooks/emit";
import { peopleOfTeam } from "../members/console/people";
import { effectiveApprovalState, mayDecideApproval, type ApprovalState, type ApproverRole } from "../../control/policy";
import type { Role } from "../../control/types";
import { ApprovalsQuery, DecideApprovalBody, type ApprovalView } from "../../schemas/policy";

const include = {
  run: { select: { title: true, holderKeyId: true } },
} as const;
type Row = NonNullable<Awaited<ReturnType<typeof loadRow>>>;
function loadRow(id: string) {
  return prisma().approval.findUnique({ where: { id }, include });
}

const iso = (d: Date | null) => (d ? d.toISOString() : null);

/** The person behind a principal, with their current role in the team (machine keys are nobody). */
function personOf(p: Principal): { userId: string; role: Role } | null {
  if (p.type === "user") return { userId: p.userId, role: p.role };
  if (p.type === "key" && p.kind === "operator" && p.userId && p.role) return { userId: p.userId, role: p.role };
  return null;
}

/** The person (if any) behind each holder key, in one read. */
async function holderUsersOf(keyIds: (string | null)[]): Promise<Map<string, string | null>> {
  const ids = [...new Set(keyIds.filter((x): x is string => !!x))];
  if (ids.length === 0) return new Map();
  const keys = await prisma().apiKey.findMany({ where: { id: { in: ids } }, select: { id: true, userId: true } });
  return new Map(keys.map((k) => [k.id, k.userId]));
}

/** The team's people named by id, as the rest of the console names them (lib/modules/members). */
async function people(team: string, ids: string[]) {
  const found = await peopleOfTeam(
    team,
    ids.map((id) => `user:${id}`),
  );
  return new Map(
    ids.map((id) => [id, { userId: id, email: found.get(`user:${id}`)?.email ?? null, name: found.get(`user:${id}`)?.name ?? null }]),
  );
}

/** The one read shape of an approval: the API, the console and the CLI all read this. */
async function toViews(p: Principal, rows: Row[], now = Date.now()): Promise<ApprovalView[]> {
  const decidedBy = rows.map((r) => r.decidedBy).filter((x): x is string => !!x && x.startsWith("user:"));
  const who = await people(teamId(p), [
    ...new Set([...rows.flatMap((r) => r.approverUserIds), ...decidedBy.map((d) => d.slice(5).split(" ")[0]!)]),
  ]);
  const holders = await holderUsersOf(rows.map((r) => r.run.holderKeyId));
  const person = personOf(p);
  return rows.map((r) => {
    const state = effectiveApprovalState(r.state as ApprovalState, r.expiresAt.getTime(), now);
    const decider = r.decidedBy?.startsWith("user:") ? r.decidedBy.slice(5).split(" ")[0]! : null;
    return {
      id: r.id,
      teamId: r.teamId,
      runId: r.runId,
      rootRunId: r.rootRunId,
      runPath: r.runPath,
      runTitle: r.run.title,
      leaseId: r.leaseId,
      epoch: r.epoch,
      operationId: r.operationId,
      tool: r.tool,
      arguments: r.arguments ?? null,
      argsDigest: r.argsDigest,
      ruleName: r.ruleName,
      policyVersion: r.policyVersion,
      approvers: {
        role: r.approverRole as ApproverRole,
        users: r.approverUserIds.map((id) => who.get(id) ?? { userId: id, email: null, name: null }),
      },
      state,
      createdAt: r.createdAt.toISOString(),
      expiresAt: r.expiresAt.toISOString(),
      decidedAt: iso(r.decidedAt),
      decidedBy: decider ? (who.get(decider) ?? { userId: decider, email: null, name: null }) : null,
      note: r.note,
      voidedAt: iso(r.voidedAt),
      voidCause: r.voidCause,
      usedAt: iso(r.usedAt),
      mayDecide:
        state === "pending" &&
        person !== null &&
        mayDecideApproval(
          {
            approverRole: r.approverRole as ApproverRole,
            approverUserIds: r.approverUserIds,
            holderUserId: r.run.holderKeyId ? (holders.get(r.run.holderKeyId) ?? null) : null,
          },
          person,
        ),
    };
  });
}

function teamId(p: Principal): string {
  const t = teamOf(p);
  if (!t) throw badRequest("a team is required");
  return t;
}

export async function listApprovals(p: Principal, query: unknown = {}): Promise<ApprovalView[]> {
  authorize(p, "run.read");
  const team = teamId(p);
  const q = ApprovalsQuery.safeParse(query);
  if (!q.success) throw badRequest("invalid query", q.error.issues);
  const now = new Date();
  const where =
    q.data.state === "open"
      ? { teamId: team, state: "pending", expiresAt: { gt: now } }
      : q.data.state === "decided"
        ? { teamId: team, NOT: { state: "pending", expiresAt: { gt: now } } }
        : { teamId: team };
  const rows = await prisma().approval.findMany({
    where,
    include,
    orderBy: q.data.state === "open" ? [{ expiresAt: "asc" }, { id: "asc" }] : [{ createdAt: "desc" }, { id: "asc" }],
    take: q.data.limit,
  });
  return toViews(p, rows, now.getTime());
}

export async function getApproval(p: Principal, id: string): Promise<ApprovalView> {
  authorize(p, "run.read");
  const row = await loadRow(id);
  // Another team's approval and a missing one answer alike.
  if (!row || row.teamId !== teamId(p)) throw notFound("approval");
  return (await toViews(p, [row]))[0]!;
}

export async function decideApproval(p: Principal, id: string, input: unknown): Promise<ApprovalView> {
  authorize(p, "approval.decide");
  const team = teamId(p);
  const body = DecideApprovalBody.safeParse(input);
  if (!body.success) throw badRequest("invalid body", body.error.issues);
  const person = personOf(p);
  if (!person) throw forbidden("only a person answers an approval");
  const actor = actorOf(p);
  await prisma().$transaction(async (tx) => {
    // The row lock orders this answer with the voiding trigger: whichever commits first, the other sees it.
    const rows = await tx.$queryRawUnsafe<
      {
        id: string;
        state: string;
        expires_at: Date;
        approver_role: ApproverRole;
        approver_user_ids: string[] | null;
        run_id: string;
        void_cause: string | null;
        holder_key_id: string | null;
      }[]
    >(
      `SELECT a.id, a.state, a.expires_at, a.approver_role::text AS approver_role, a.approver_user_ids, a.run_id, a.void_cause, r.holder_key_id
         FROM approvals a JOIN runs r ON r.id = a.run_id WHERE a.id = $1 AND a.team_id = $2 FOR UPDATE OF a`,
      id,
      team,
    );
    const a = rows[0];
    if (!a) throw notFound("approval");
    const holderUserId = a.holder_key_id ? ((await holderUsersOf([a.holder_key_id])).get(a.holder_key_id) ?? null) : null;
    if (!mayDecideApproval({ approverRole: a.approver_role, approverUserIds: a.approver_user_ids ?? [], holderUserId }, person))
      throw forbidden(
        holderUserId === person.userId
          ? "the person whose key holds this run cannot answer its approvals"
          : `this approval needs a ${a.approver_role} or one of the people its rule names`,
      );
    if (a.state === "voided")
      throw new QuiesceError("conflict", `this approval was voided (${a.void_cause ?? "stopped"}): nothing to answer`);
    if (a.state !== "pending") throw new QuiesceError("conflict", `this approval is already ${a.state}`);
    if (a.expires_at.getTime() <= Date.now()) {
      await tx.approval.update({ where: { id }, data: { state: "expired", decidedAt: a.expires_at } });
      throw new QuiesceError("conflict", "this approval expired before it was answered");
    }
    const state = body.data.decision === "approve" ? "approved" : "denied";
    const after = await tx.approval.update({
      where: { id },
      data: { state, decidedAt: new Date(), decidedBy: actor, note: body.data.note ?? null },
      select: { runId: true, rootRunId: true, operationId: true, tool: true },
    });
    await appendAudit(tx, {
      teamId: team,
      actor,
      action: `approval.${state === "approved" ? "approve" : "deny"}`,
      target: id,
      before: { state: "pending" },
      after: { state, note: body.data.note ?? null, operationId: after.operationId, tool: after.tool },
    });
    await emitEventTx(tx, {
      teamId: team,
      type: "approval.decided",
      runId: after.runId,
      subject: id,
      data: { approval_id: id, state, by: actor, operation_id: after.operationId, tool: after.tool },
    });
    // Wakes the agent's event stream: it asks the gate again and gets its answer at once.
    await notifyControl(tx, { kind: "approval", teamId: team, rootRunId: after.rootRunId, runIds: [after.runId] });
  });
  return getApproval(p, id);
}

/**
 * The engine's sweep: expire approvals past their deadline, void the open ones whose lease lapsed, and announce
 * the ones not yet announced (one event per card, written in the transaction that marks it announced).
 */
export async function sweepApprovals(p: Principal, teamId: string | null): Promise<{ expired: number; voided: number; announced: number }> {
  if (p.type !== "system") throw forbidden("system only");
  return prisma().$transaction(async (tx) => {
    const expired = await tx.$executeRawUnsafe(
      `UPDATE approvals SET state = 'expired', decided_at = expires_at
        WHERE state = 'pending' AND expires_at <= clock_timestamp() AND ($1::text IS NULL OR team_id = $1)`,
      teamId,
    );
    const voided = await tx.$executeRawUnsafe(
      `UPDATE approvals a SET state = 'voided', live_key = NULL, voided_at = clock_timestamp(), void_cause = 'lease_expired'
        WHERE a.state IN ('pending', 'approved') AND a.used_at IS NULL AND ($1::text IS NULL OR a.team_id = $1)
          AND EXISTS (SELECT 1 FROM leases l WHERE l.id = ANY (a.lease_path) AND l.valid_until <= clock_timestamp())`,
      teamId,
    );
    const fresh = await tx.$queryRawUnsafe<
      {
        id: string;
        team_id: string;
        run_id: string;
        root_run_id: string;
        operation_id: string;
        tool: string;
        expires_at: Date;
        rule_name: string;
        arguments: unknown;
      }[]
    >(
      `UPDATE approvals SET announced_at = clock_timestamp()
        WHERE id IN (SELECT id FROM approvals WHERE announced_at IS NULL AND ($1::text IS NULL OR team_id = $1)
                      ORDER BY created_at LIMIT 500 FOR UPDATE SKIP LOCKED)
        RETURNING id, team_id, run_id, root_run_id, operation_id, tool, expires_at, rule_name, arguments`,
      teamId,
    );
    await emitEventsTx(
      tx,
      fresh.map((a) => ({
        teamId: a.team_id,
        type: "approval.requested" as const,
        runId: a.run_id,
        subject: a.id,
        data: {
          approval_id: a.id,
          root_run_id: a.root_run_id,
          operation_id: a.operation_id,
          tool: a.tool,
          rule: a.rule_name,
          arguments: a.arguments,
          expires_at: a.expires_at.toISOString(),
        },
      })),
    );
    return { expired, voided, announced: fresh.length };
  });
}
