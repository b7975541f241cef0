// Recovery (docs/evidence.md#recovery): every effect a barrier found completed has an item (opened at
// commit by the settlements_open_recovery trigger) with an owner and a due time. Managers assign it; its
// owner or a manager starts the provider's compensation — proven only by a later effect check that
// answers absent — or records what a person did. Every write is audited and issues the next receipt version.
import "server-only";
import { randomUUID } from "node:crypto";
import { prisma, type Tx } from "../../platform/db/prisma";
import { badRequest, forbidden, notFound, QuiesceError } from "../../platform/errors";
import { authorize, assertTeam } from "../../platform/auth/authorize";
import { actorOf, type Principal } from "../../platform/auth/principal";
import { notifyControl } from "../../platform/db/notify";
import { appendAudit } from "../audit/audit";
import { emitEventsTx, emitEventTx } from "../webhooks/emit";
import { coveringBarriersTx } from "./internal/evidence";
import { lockBarrierTx, reissueCoveringTx } from "./internal/receipts";
import { providerFor } from "./providers/http";
import type { ProviderOperationRef } from "./providers/types";
import {
  compensationVerdict,
  FINAL_RECOVERY_STATES,
  isUnsettledRecovery,
  mayChangeRecovery,
  mayMove,
  UNSETTLED_RECOVERY_STATES,
  type RecoveryState,
} from "../../control/recovery";
import type { Role } from "../../control/types";
import { RecordRecoveryBody, type RecordRecoveryInput, type RecoveryView } from "../../schemas/recovery";
import { sleep } from "../../platform/wait";

const include = {
  operation: { select: { operationId: true, runId: true, tool: true, providerJobId: true } },
  assignee: { select: { id: true, email: true, name: true } },
} as const;
type Row = NonNullable<Awaited<ReturnType<typeof loadRow>>>;
function loadRow(id: string) {
  return prisma().recoveryItem.findUnique({ where: { id }, include });
}

const iso = (d: Date | null) => (d ? d.toISOString() : null);

/** The one read shape of a recovery item: the API, the console and the CLI all read this. */
export function toRecoveryView(r: Row, compensable: boolean, now = new Date()): RecoveryView {
  return {
    id: r.id,
    teamId: r.teamId,
    barrierId: r.barrierId,
    runId: r.operation.runId,
    operationId: r.operation.operationId,
    tool: r.operation.tool,
    providerName: r.providerName,
    providerJobId: r.operation.providerJobId,
    rollbackOwner: r.rollbackOwner,
    assignee: r.assignee ? { userId: r.assignee.id, email: r.assignee.email, name: r.assignee.name } : null,
    assignedBy: r.assignedBy,
    assignedAt: iso(r.assignedAt),
    state: r.state,
    settledBy: r.settledBy as RecoveryView["settledBy"],
    note: r.note,
    evidence: r.evidence,
    changedBy: r.changedBy,
    changedAt: iso(r.changedAt),
    compensable,
    compensationRequestedAt: iso(r.compensationRequestedAt),
    compensationResponse: r.compensationResponse,
    verifiedAt: iso(r.verifiedAt),
    verifiedEffect: r.verifiedEffect as RecoveryView["verifiedEffect"],
    dueAt: r.dueAt.toISOString(),
    overdue: isUnsettledRecovery(r.state) && r.dueAt <= now,
    createdAt: r.createdAt.toISOString(),
  };
}

async function views(rows: Row[]): Promise<RecoveryView[]> {
  const teams = [...new Set(rows.map((r) => r.teamId))];
  const providers = teams.length
    ? await prisma().provider.findMany({ where: { teamId: { in: teams } }, select: { teamId: true, name: true, compensateUrl: true } })
    : [];
  const compensable = new Set(providers.filter((p) => p.compensateUrl).map((p) => `${p.teamId}\u0000${p.name}`));
  return rows.map((r) => toRecoveryView(r, !!r.providerName && compensable.has(`${r.teamId}\u0000${r.providerName}`)));
}

export interface RecoveryFilter {
  teamId?: string;
  /** "open": still owed (open, in progress, failed); "final": rolled back or accepted. */
  state?: "open" | "final" | "all" | RecoveryState;
  barrierId?: string;
  /** null: nobody holds it */
  assigneeUserId?: string | null;
  /** opened at or before this time (the console's age filter) */
  createdAtOrBefore?: Date;
  /** still owed and due at or before this time */
  overdueAt?: Date;
  limit?: number;
}

const UNSETTLED = [...UNSETTLED_RECOVERY_STATES];

export async function listRecoveries(p: Principal, filter: RecoveryFilter = {}): Promise<RecoveryView[]> {
  authorize(p, "run.read");
  const teamId = p.type === "system" ? filter.teamId : p.teamId;
  const state = filter.state ?? "open";
  const rows = await prisma().recoveryItem.findMany({
    where: {
      ...(teamId ? { teamId } : {}),
      AND: [
        state === "open"
          ? { state: { in: UNSETTLED } }
          : state === "final"
            ? { state: { in: [...FINAL_RECOVERY_STATES] } }
            : state === "all"
              ? {}
              : { state },
        filter.overdueAt ? { state: { in: UNSETTLED }, dueAt: { lte: filter.overdueAt } } : {},
      ],
      ...(filter.barrierId ? { barrierId: filter.barrierId } : {}),
      ...(filter.assigneeUserId !== undefined ? { assigneeUserId: filter.assigneeUserId } : {}),
      ...(filter.createdAtOrBefore ? { createdAt: { lte: filter.createdAtOrBefore } } : {}),
    },
    include,
    orderBy: [{ dueAt: "asc" }, { id: "asc" }],
    take: Math.min(Math.max(filter.limit ?? 200, 1), 1000),
  });
  return views(rows);
}

export async function getRecovery(p: Principal, id: string): Promise<RecoveryView> {
  authorize(p, "run.read");
  const r = await loadRow(id);
  if (!r) throw notFound("recovery item");
  assertTeam(p, r.teamId, "recovery item");
  return (await views([r]))[0]!;
}

function callerIds(p: Principal): { role: Role | null; userId: string | null } {
  return p.type === "system" ? { role: null, userId: null } : { role: p.role, userId: p.userId };
}

/** Loads, authorizes against the team, and checks that the caller is the owner or a manager. */
async function ownItem(p: Principal, id: string): Promise<Row> {
  authorize(p, "reconciliation.resolve");
  const r = await loadRow(id);
  if (!r) throw notFound("recovery item");
  assertTeam(p, r.teamId, "recovery item");
  if (p.type !== "system" && !mayChangeRecovery(callerIds(p), r.assigneeUserId)) {
    throw forbidden("only the recovery's owner or a manager/admin may change it");
  }
  return r;
}

/** Locks every barrier covering the run (oldest first, as reconciliations do), then runs `body` and re-issues their receipts. */
async function changeTx<T>(r: Row, actor: string, body: (tx: Tx) => Promise<T>): Promise<T> {
  return prisma().$transaction(async (tx) => {
    for (const b of await coveringBarriersTx(tx, r.operation.runId)) await lockBarrierTx(tx, b.id);
    const out = await body(tx);
    await reissueCoveringTx(tx, r.operation.runId, actor);
    const root = await tx.run.findUniqueOrThrow({ where: { id: r.operation.runId }, select: { rootRunId: true } });
    await notifyControl(tx, { kind: "settlement", teamId: r.teamId, rootRunId: root.rootRunId, barrierId: r.barrierId });
    return out;
  });
}

async function writeState(
  tx: Tx,
  r: Row,
  actor: string,
  action: string,
  data: Parameters<Tx["recoveryItem"]["update"]>[0]["data"] & { state: RecoveryState },
  expectState: RecoveryState,
): Promise<void> {
  // Compare-and-set: two people acting on one item at once — the second sees a conflict, not a lost write.
  const n = await tx.recoveryItem.updateMany({
    where: { id: r.id, state: expectState },
    data: { ...data, changedBy: actor, changedAt: new Date() },
  });
  if (n.count === 0) throw new QuiesceError("conflict", "the recovery item changed meanwhile; read it again");
  await appendAudit(tx, {
    teamId: r.teamId,
    actor,
    action,
    target: r.id,
    before: { state: expectState },
    after: { state: data.state, note: data.note ?? null, evidence: data.evidence ?? null, settled_by: data.settledBy ?? null },
  });
  await emitEventTx(tx, {
    teamId: r.teamId,
    type: "recovery.changed",
    runId: r.operation.runId,
    subject: r.id,
    data: { recovery_id: r.id, operation_id: r.operation.operationId, state: data.state, by: actor, barrier_id: r.barrierId },
  });
}

export async function assignRecovery(p: Principal, id: string, assigneeUserId: string): Promise<RecoveryView> {
  authorize(p, "reconciliation.assign");
  const r = await loadRow(id);
  if (!r) throw notFound("recovery item");
  assertTeam(p, r.teamId, "recovery item");
  if (!assigneeUserId?.trim()) throw badRequest("assigneeUserId: required");
  const member = await prisma().membership.findUnique({ where: { teamId_userId: { teamId: r.teamId, userId: assigneeUserId } } });
  if (!member) throw badRequest("assigneeUserId: not a member of this team");
  if (!isUnsettledRecovery(r.state)) throw new QuiesceError("conflict", `recovery already ${r.state}`);
  const actor = actorOf(p);
  await changeTx(r, actor, async (tx) => {
    await tx.recoveryItem.update({ where: { id }, data: { assigneeUserId, assignedBy: actor, assignedAt: new Date() } });
    await appendAudit(tx, {
      teamId: r.teamId,
      actor,
      action: "recovery.assign",
      target: id,
      before: { assigneeUserId: r.assigneeUserId },
      after: { assigneeUserId },
    });
  });
  return getRecovery({ type: "system", name: "recovery" }, id);
}

/** A person's record: what they did (rolled back by hand, accepted the effect, tried and failed) and on what evidence. */
export async function recordRecovery(p: Principal, id: string, body: RecordRecoveryInput | unknown): Promise<RecoveryView> {
  const parsed = RecordRecoveryBody.safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw badRequest(`${issue.path.join(".") || "body"}: ${issue.message}`);
  }
  const input = parsed.data;
  const r = await ownItem(p, id);
  if (!mayMove(r.state, input.state)) throw new QuiesceError("conflict", `a recovery that is ${r.state} cannot become ${input.state}`);
  const actor = actorOf(p);
  const final = input.state === "rolled_back" || input.state === "accepted";
  await changeTx(r, actor, (tx) =>
    writeState(
      tx,
      r,
      actor,
      "recovery.record",
      { state: input.state, note: input.note, evidence: input.evidence, settledBy: final ? "person" : null },
      r.state,
    ),
  );
  return getRecovery({ type: "system", name: "recovery" }, id);
}

/** How long `startRecovery` watches the provider's effect check after asking, before leaving the item in progress. */
const VERIFY_TRIES = 5;

/**
 * Asks the provider to undo the effect (idempotency key per attempt), then reads the provider's truth:
 * `rolled_back` only when a check made after the ask answers absent; present is `failed`; no answer
 * leaves it `in_progress` (start again to look again — the same key never undoes twice).
 */
export async function startRecovery(p: Principal, id: string): Promise<RecoveryView> {
  const r = await ownItem(p, id);
  if (!isUnsettledRecovery(r.state)) throw new QuiesceError("conflict", `recovery already ${r.state}`);
  const cfg = r.providerName
    ? await prisma().provider.findUnique({ where: { teamId_name: { teamId: r.teamId, name: r.providerName } } })
    : null;
  if (!cfg?.compensateUrl) {
    throw new QuiesceError(
      "conflict",
      `${r.providerName ? `provider ${r.providerName}` : "this effect's provider"} declares no compensation endpoint: record what a person did instead`,
    );
  }
  const actor = actorOf(p);
  // A retry of an attempt in progress keeps its key; a new attempt (open, or after failed) gets a new one.
  const key = r.state === "in_progress" && r.compensationKey ? r.compensationKey : `${r.id}:${randomUUID()}`;
  const askedAt = new Date();
  await changeTx(r, actor, (tx) =>
    writeState(
      tx,
      r,
      actor,
      "recovery.start",
      { state: "in_progress", compensationKey: key, compensationRequestedAt: askedAt, settledBy: null },
      r.state,
    ),
  );
  const provider = providerFor({ ...cfg, compensateUrl: cfg.compensateUrl });
  const ref: ProviderOperationRef = {
    operationId: r.operation.operationId,
    providerJobId: r.operation.providerJobId,
    runId: r.operation.runId,
    tool: r.operation.tool,
  };
  const asked = await provider.requestCompensation(ref, key);
  let verdict: "rolled_back" | "failed" | "in_progress" = "in_progress";
  let check: { effect: "present" | "absent" | "unavailable"; checkedAt: string } | null = null;
  for (let i = 0; i < VERIFY_TRIES && verdict === "in_progress"; i++) {
    if (i > 0) await sleep(Math.min(200 * 2 ** (i - 1), 1600));
    const answer = await provider.checkEffect(ref);
    check = { effect: answer.effect, checkedAt: new Date().toISOString() };
    verdict = compensationVerdict(askedAt.toISOString(), check);
    // Present but not final: the provider may still be undoing it; look again before calling it failed.
    if (verdict === "failed" && !answer.final && i < VERIFY_TRIES - 1) verdict = "in_progress";
  }
  const cur = await prisma().recoveryItem.findUniqueOrThrow({ where: { id } });
  if (cur.state !== "in_progress" || cur.compensationKey !== key) return getRecovery({ type: "system", name: "recovery" }, id);
  await changeTx(r, actor, (tx) =>
    writeState(
      tx,
      r,
      actor,
      "recovery.verify",
      {
        state: verdict,
        compensationResponse: asked.response,
        verifiedAt: check ? new Date(check.checkedAt) : null,
        verifiedEffect: check?.effect ?? null,
        settledBy: verdict === "rolled_back" ? "provider" : null,
        note:
          verdict === "rolled_back"
            ? `${r.providerName} reported the effect absent after the compensation`
            : verdict === "failed"
              ? `${r.providerName} ${asked.response} the compensation, but its effect check still sees the effect`
              : `${r.providerName} ${asked.response} the compensation; its effect check has not answered absent yet`,
      },
      "in_progress",
    ),
  );
  return getRecovery({ type: "system", name: "recovery" }, id);
}

/**
 * Overdue items (past their due time, still owed) are announced once: a `recovery.overdue` event to the
 * team's webhooks (CloudEvents type dev.quiesce.recovery.overdue), marked so the next sweep skips them.
 * Run on the barrier engine's wake. Returns the items announced.
 */
export async function announceOverdueRecoveries(p: Principal, teamId: string | null): Promise<{ id: string; teamId: string }[]> {
  if (p.type !== "system") throw forbidden("system only");
  return prisma().$transaction(async (tx) => {
    const due = await tx.$queryRaw<
      {
        id: string;
        team_id: string;
        operation_id: string;
        run_id: string;
        barrier_id: string;
        due_at: Date;
        assignee: string | null;
        state: string;
      }[]
    >`
      WITH due AS (
        UPDATE recovery_items ri SET overdue_notified_at = clock_timestamp()
         WHERE ri.state IN ('open', 'in_progress', 'failed') AND ri.due_at <= clock_timestamp() AND ri.overdue_notified_at IS NULL
           AND (${teamId}::text IS NULL OR ri.team_id = ${teamId}::text)
        RETURNING ri.id, ri.team_id, ri.operation_id, ri.barrier_id, ri.due_at, ri.assignee_user_id, ri.state)
      SELECT due.id, due.team_id, o.operation_id, o.run_id, due.barrier_id, due.due_at, u.email AS assignee, due.state::text AS state
        FROM due JOIN operations o ON o.id = due.operation_id LEFT JOIN users u ON u.id = due.assignee_user_id
       ORDER BY due.due_at, due.id`;
    await emitEventsTx(
      tx,
      due.map((d) => ({
        teamId: d.team_id,
        type: "recovery.overdue" as const,
        runId: d.run_id,
        subject: d.id,
        data: {
          recovery_id: d.id,
          operation_id: d.operation_id,
          state: d.state,
          owner: d.assignee,
          due_at: d.due_at.toISOString(),
          barrier_id: d.barrier_id,
        },
      })),
    );
    return due.map((d) => ({ id: d.id, teamId: d.team_id }));
  });
}
