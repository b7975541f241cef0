// Operations (docs/architecture.md#, #the-wire-contract): registration of queued / scheduled / retry work and completion
// with its effect. Admission and heartbeats are the gate's single statement (lib/modules/gate).
//
// Registration is checked against current authority with the gate's own pure rules (lib/control/gate):
// a killed, revoked, expired or stale-epoch run cannot enqueue (409 with the gate's reason). A paused
// run or an open breaker CAN enqueue: the work waits and admission decides when it is dequeued.
import "server-only";
import { prisma } from "../../platform/db/prisma";
import { newId } from "../../platform/ids";
import { QuiesceError, badRequest, notFound } from "../../platform/errors";
import { decideAuthority } from "../../control/gate";
import { currentEpoch } from "../../control/epoch";
import { recordLateReport } from "../stop/late-report";
import { isReportedOutcome, type OperationState } from "../../control/types";
import type {
  CompleteBody,
  CompleteResponse,
  RecordProviderBody,
  RecordProviderResponse,
  RegisterOperationBody,
  RegisterOperationResponse,
} from "../../schemas/operations";
import { lockRunTreeExclusive } from "../../platform/db/locks";
import { actorOf, type Principal } from "../../platform/auth/principal";
import { assertTeam, authorize } from "../../platform/auth/authorize";
import { loadLeaseChain, loadRunChain, lockRunTreeShared, treeKilled } from "./internal/run-facts";
import { applyBreakerOutcome } from "../gate/breaker";
import { assertHolder } from "./holder";

/** Gate reasons that stop registration; breaker_open and paused only delay admission. */
const REGISTRATION_BLOCKERS = new Set([
  "killed",
  "parent_revoked",
  "finished",
  "lease_revoked",
  "lease_expired",
  "stale_epoch",
  "operation_expired",
]);

/** A retry waits for its backoff like scheduled work; its kind keeps it apart in the receipt counts. */
function initialState(kind: RegisterOperationBody["kind"]): OperationState {
  return kind === "queued" ? "queued" : "scheduled";
}

export async function registerOperation(
  p: Principal,
  body: RegisterOperationBody & { teamId?: string },
): Promise<RegisterOperationResponse> {
  try {
    return await registerOnce(p, body);
  } catch (err) {
    // Two registrations of one operationId raced past the existence check; the loser's insert hit the
    // unique index. Answer it like any repeat (the transaction rolled back, so it wrote nothing).
    if ((err as { code?: string })?.code === "P2002") return registerOnce(p, body);
    throw err;
  }
}

async function registerOnce(p: Principal, body: RegisterOperationBody & { teamId?: string }): Promise<RegisterOperationResponse> {
  authorize(p, "operation.register");
  const notBefore = body.notBefore ? new Date(body.notBefore) : null;
  const expiresAt = body.expiresAt ? new Date(body.expiresAt) : null;
  if (notBefore && expiresAt && expiresAt <= notBefore) throw badRequest("expiresAt: must be later than notBefore");
  return prisma().$transaction(async (tx) => {
    const run = await tx.run.findUnique({ where: { id: body.runId }, select: { id: true, teamId: true, rootRunId: true, path: true } });
    if (!run) throw notFound("run");
    assertTeam(p, run.teamId, "run");
    // Shared: serialized with a kill (which cancels every queued operation it can see), not with gates.
    await lockRunTreeShared(tx, run.rootRunId);
    const existing = await tx.operation.findUnique({
      where: { teamId_operationId: { teamId: run.teamId, operationId: body.operationId } },
    });
    if (existing) {
      if (existing.runId !== run.id) throw new QuiesceError("conflict", "operationId: already used by another run");
      return { operationId: existing.operationId, state: existing.state as OperationState, created: false };
    }
    // One after the other: statements of one transaction run on one connection anyway, and handing pg a
    // second query while the first runs is deprecated (pg 9 removes its queue).
    const chain = await loadRunChain(tx, run.teamId, run.path);
    const leaseChain = await loadLeaseChain(tx, run.teamId, body.leaseId);
    const verdict = decideAuthority({
      now: Date.now(),
      mode: "gate",
      request: { runId: run.id, leaseId: body.leaseId, epoch: body.epoch, operationId: body.operationId },
      chain,
      leaseChain,
      operation: {
        operationId: body.operationId,
        runId: run.id,
        state: initialState(body.kind),
        stateReason: null,
        expiresAt: expiresAt?.getTime() ?? null,
      },
    });
    if (verdict.decision === "deny" && verdict.reason === "missing_state") throw badRequest("leaseId: not a lease of this run");
    if (verdict.decision === "deny" && REGISTRATION_BLOCKERS.has(verdict.reason)) {
      const epoch = chain.every((r) => r !== null) ? currentEpoch(chain as { epoch: number }[]) : null;
      throw new QuiesceError("conflict", `run cannot take new work: ${verdict.reason}`, {
        decision: "deny",
        reason: verdict.reason,
        currentEpoch: epoch,
      });
    }
    const op = await tx.operation.create({
      data: {
        id: newId("op"),
        teamId: run.teamId,
        operationId: body.operationId,
        runId: run.id,
        leaseId: body.leaseId,
        epochStamp: body.epoch,
        kind: body.kind,
        tool: body.tool,
        argsDigest: body.argsDigest ?? null,
        notBefore,
        expiresAt,
        state: initialState(body.kind),
        providerName: body.providerName ?? null,
        providerJobId: body.providerJobId ?? null,
        registeredByKey: p.type === "key" ? p.keyId : null,
      },
    });
    return { operationId: op.operationId, state: op.state as OperationState, created: true };
  });
}

type CompleteOutcome = { late: false; response: CompleteResponse } | { late: true };

/**
 * Records the outcome (and effect receipt) of a running operation and feeds the breaker. Only the
 * operation's holder may report (docs/security/authorization.md#holders); anyone else gets 403 and writes nothing.
 * On a killed run tree the report is kept as the holder's claim (committed) and the caller gets 409.
 */
export async function completeOperation(p: Principal, operationId: string, body: CompleteBody): Promise<CompleteResponse> {
  authorize(p, "operation.report");
  if (p.type === "system") throw badRequest("complete: a key or user principal is required");
  if (body.outcome === "aborted_unknown" && body.effect) throw badRequest("effect: an aborted_unknown outcome cannot carry an effect");
  const actor = actorOf(p);
  const result = await prisma().$transaction(async (tx): Promise<CompleteOutcome> => {
    const found = await tx.operation.findUnique({
      where: { teamId_operationId: { teamId: p.teamId, operationId } },
      select: { id: true, runId: true, registeredByKey: true },
    });
    if (!found) throw notFound("operation");
    const run = await tx.run.findUniqueOrThrow({
      where: { id: found.runId },
      select: { id: true, teamId: true, rootRunId: true, path: true },
    });
    assertTeam(p, run.teamId, "operation");
    // Same team is not enough: a stranger's report would be evidence about someone else's work.
    await assertHolder(
      tx,
      p,
      { teamId: run.teamId, path: run.path, operationKey: found.registeredByKey },
      body.leaseId,
      "report its outcome",
    );
    // Spend is spend, late or not: the actual cost replaces the estimate the gate reserved (a retry changes nothing).
    if (body.cost) await tx.$queryRawUnsafe("SELECT quiesce_settle_reservations($1, $2::jsonb)", found.id, JSON.stringify(body.cost));
    // The breaker is control state: its runtime transition serializes with gates like any control write.
    await lockRunTreeExclusive(tx, run.rootRunId);
    const op = await tx.operation.findUniqueOrThrow({ where: { id: found.id } });

    if (await treeKilled(tx, run.path)) {
      // A claim, never a settlement: only the provider's effect check or a person settles it.
      await recordLateReport(tx, {
        // aborted_unknown reaches the barrier as itself: evidence that proves nothing about the effect.
        operationRowId: op.id,
        teamId: run.teamId,
        runId: run.id,
        outcome: body.outcome,
        effect: body.effect ? { providerOperationId: body.effect.providerOperationId, detail: body.effect.detail } : undefined,
        reportedBy: actor,
      });
      return { late: true };
    }

    const receiptOf = async () =>
      (await tx.effectReceipt.findFirst({ where: { operationId: op.id }, orderBy: { createdAt: "asc" }, select: { id: true } }))?.id ??
      null;
    const breakerNow = async () => (await tx.run.findUniqueOrThrow({ where: { id: run.id }, select: { breaker: true } })).breaker;
    if (isReportedOutcome(op.state)) {
      // A retried report (the executor lost our answer) is answered with what was recorded.
      if (op.state !== body.outcome) throw new QuiesceError("conflict", `operation already ${op.state}`);
      return { late: false, response: { operationId, state: op.state, effectReceiptId: await receiptOf(), breaker: await breakerNow() } };
    }
    if (op.state !== "running") throw new QuiesceError("conflict", `operation is ${op.state}: only a running operation can complete`);

    const now = new Date();
    await tx.operation.update({
      where: { id: op.id },
      data: { state: body.outcome, finishedAt: now, outcomeDetail: (body.detail ?? undefined) as never },
    });
    let effectReceiptId: string | null = null;
    if (body.effect) {
      const provider = op.providerName
        ? await tx.provider.findUnique({
            where: { teamId_name: { teamId: run.teamId, name: op.providerName } },
            select: { rollbackOwner: true },
          })
        : null;
      effectReceiptId = newId("eff");
      await tx.effectReceipt.create({
        data: {
          id: effectReceiptId,
          teamId: run.teamId,
          operationId: op.id,
          providerOperationId: body.effect.providerOperationId,
          detail: (body.effect.detail ?? undefined) as never,
          committedAt: body.effect.committedAt ? new Date(body.effect.committedAt) : now,
          rollbackOwner: body.effect.rollbackOwner ?? provider?.rollbackOwner ?? null,
          source: "executor",
        },
      });
    }
    // An unknown outcome is not a success: the breaker counts it as a failure. Only holders get here,
    // so another key of the team cannot trip someone else's run.
    const breaker = await applyBreakerOutcome(tx, {
      teamId: run.teamId,
      rootRunId: run.rootRunId,
      runPath: run.path,
      operationId,
      outcome: body.outcome === "aborted_unknown" ? "failed" : body.outcome,
      actor,
    });
    return { late: false, response: { operationId, state: body.outcome, effectReceiptId, breaker } };
  });
  // The late report is committed as evidence; only then is the caller refused.
  if (result.late) throw new QuiesceError("conflict", "run killed: report kept as your claim (evidence, not a settlement)");
  return result.response;
}

/**
 * Records where a running operation's work is held — a task id at an MCP server or an A2A agent — so a
 * stop's provider check can ask there (docs/design/mcp-tasks.md). Only the holder, only while the
 * operation runs (a kill leaves it running until it is settled), and only once: a pointer, never an outcome.
 */
export async function recordOperationProvider(
  p: Principal,
  operationId: string,
  body: RecordProviderBody,
): Promise<RecordProviderResponse> {
  authorize(p, "operation.report");
  if (p.type === "system") throw badRequest("provider: a key or user principal is required");
  return prisma().$transaction(async (tx) => {
    const op = await tx.operation.findUnique({ where: { teamId_operationId: { teamId: p.teamId, operationId } } });
    if (!op) throw notFound("operation");
    const run = await tx.run.findUniqueOrThrow({ where: { id: op.runId }, select: { teamId: true, path: true } });
    assertTeam(p, run.teamId, "operation");
    await assertHolder(
      tx,
      p,
      { teamId: run.teamId, path: run.path, operationKey: op.registeredByKey },
      body.leaseId,
      "record its provider",
    );
    const provider = await tx.provider.findUnique({ where: { teamId_name: { teamId: run.teamId, name: body.providerName } } });
    if (!provider) throw badRequest("providerName: no provider of that name in this team");
    const answer = (recorded: boolean) => ({ operationId, providerName: body.providerName, providerJobId: body.providerJobId, recorded });
    if (op.providerName === body.providerName && op.providerJobId === body.providerJobId) return answer(false);
    if (op.providerName !== null || op.providerJobId !== null)
      throw new QuiesceError("conflict", "operation already names where its work is held");
    // Conditional on the row as read: a concurrent completion or second reference changes nothing.
    const n = await tx.operation.updateMany({
      where: { id: op.id, state: "running", providerName: null, providerJobId: null },
      data: { providerName: body.providerName, providerJobId: body.providerJobId },
    });
    if (n.count === 0) throw new QuiesceError("conflict", `operation is ${op.state}: only a running operation names its provider`);
    return answer(true);
  });
}
