// Restart on settled ground (docs/evidence.md#restart): a killed root starts again as a new root run for the
// same task only when its tree's final receipt says stopped_and_quiet and no recovery is still owed. The new
// run names the old one and that receipt's digest, keeps the old holder, and reads the old tree's operation
// ledger: what completed is already applied, what never ran is free to run again.
import "server-only";
import { prisma } from "../../platform/db/prisma";
import { notFound, QuiesceError } from "../../platform/errors";
import { authorize, assertTeam } from "../../platform/auth/authorize";
import { actorOf, type Principal } from "../../platform/auth/principal";
import { appendAudit } from "../audit/audit";
import { createRootRun } from "../runs/register/root";
import { restartBlockers, type RecoveryFact } from "../../control/recovery";
import type { LedgerView, RestartView } from "../../schemas/restart";
import type { Harness } from "../../control/types";

const APPLIED = new Set(["succeeded", "failed"]);
const NEVER_RAN = new Set(["cancelled_not_started", "denied"]);

/** The old tree's operations with their settled outcome, in the order they were created. */
async function ledgerOf(rootRunId: string): Promise<LedgerView["operations"]> {
  const ops = await prisma().operation.findMany({
    where: { run: { rootRunId } },
    select: {
      operationId: true,
      runId: true,
      tool: true,
      state: true,
      effectReceipts: { orderBy: { createdAt: "desc" }, take: 1, select: { id: true, providerOperationId: true, committedAt: true } },
    },
    orderBy: [{ createdAt: "asc" }, { id: "asc" }],
  });
  return ops.map((o) => {
    const e = o.effectReceipts[0];
    return {
      operationId: o.operationId,
      runId: o.runId,
      tool: o.tool,
      state: o.state,
      outcome: APPLIED.has(o.state) ? "already_applied" : NEVER_RAN.has(o.state) ? "free_to_run" : "unsettled",
      effectReceipt: e
        ? { effectReceiptId: e.id, providerOperationId: e.providerOperationId, committedAt: e.committedAt.toISOString() }
        : null,
    };
  });
}

export async function restartRun(p: Principal, runId: string, reason: string): Promise<RestartView> {
  // A person's control write: machine keys never restart what an operator killed.
  authorize(p, "run.resume");
  const run = await prisma().run.findUnique({ where: { id: runId }, include: { restartedAs: { select: { id: true } } } });
  if (!run) throw notFound("run");
  assertTeam(p, run.teamId, "run");
  if (run.parentRunId) throw new QuiesceError("conflict", `only a killed root restarts: this run's root is ${run.rootRunId}`);
  if (run.lifecycle !== "killed") throw new QuiesceError("conflict", `only a killed run restarts: this one is ${run.lifecycle}`);
  if (run.restartedAs)
    throw new QuiesceError("conflict", `already restarted as ${run.restartedAs.id}`, { restartedAs: run.restartedAs.id });
  const barrier = await prisma().barrier.findFirst({
    where: { runId },
    orderBy: { requestedAt: "desc" },
    select: { id: true, receipts: { orderBy: { version: "desc" }, take: 1, select: { decision: true, digest: true, version: true } } },
  });
  const receipt = barrier?.receipts[0] ?? null;
  const items = await prisma().recoveryItem.findMany({
    where: { operation: { run: { rootRunId: runId } } },
    select: { state: true, settledBy: true, providerName: true, operation: { select: { operationId: true } } },
  });
  const facts: RecoveryFact[] = items.map((i) => ({
    operationId: i.operation.operationId,
    state: i.state,
    settledBy: i.settledBy as RecoveryFact["settledBy"],
    providerName: i.providerName,
    by: null,
    at: null,
  }));
  const blockers = restartBlockers(receipt?.decision ?? null, facts);
  if (blockers.length > 0) throw new QuiesceError("conflict", `cannot restart yet: ${blockers.join("; ")}`, { blockers });
  const actor = actorOf(p);
  let created;
  try {
    created = await createRootRun({
      teamId: run.teamId,
      // The new run keeps the old one's holder: the agent that held it continues it.
      by: { actor, holderKeyId: run.holderKeyId, system: false },
      harness: run.harness as Harness,
      input: { taskId: run.taskId, ...(run.title ? { title: run.title } : {}), ...(run.isDrill ? { drill: true } : {}) },
      native: {},
      restartOf: { runId, digest: receipt!.digest },
    });
  } catch (err) {
    // Two restarts at once: the unique restarted_from_run_id lets one through.
    if ((err as { code?: string }).code === "23505") throw new QuiesceError("conflict", "already restarted");
    throw err;
  }
  await prisma().$transaction((tx) =>
    appendAudit(tx, {
      teamId: run.teamId,
      actor,
      action: "run.restart",
      target: runId,
      before: { lifecycle: run.lifecycle, receipt: receipt!.digest },
      after: { restartedAs: created.runId, reason },
    }),
  );
  return {
    runId: created.runId,
    rootRunId: created.rootRunId,
    epoch: created.epoch,
    restartedFrom: runId,
    restartedFromDigest: receipt!.digest,
    ledger: await ledgerOf(runId),
  };
}

/** The operation ledger a restarted run inherits (empty for a run that is not a restart). */
export async function getLedger(p: Principal, runId: string): Promise<LedgerView> {
  authorize(p, "run.read");
  const run = await prisma().run.findUnique({
    where: { id: runId },
    select: { teamId: true, restartedFromRunId: true, restartedFromDigest: true },
  });
  if (!run) throw notFound("run");
  assertTeam(p, run.teamId, "run");
  return {
    runId,
    restartedFrom: run.restartedFromRunId,
    restartedFromDigest: run.restartedFromDigest,
    operations: run.restartedFromRunId ? await ledgerOf(run.restartedFromRunId) : [],
  };
}
