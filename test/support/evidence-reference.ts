// The per-barrier evidence loader as it was before the set-based one (lib/modules/stop/internal/evidence.ts
// loadEvidenceFactsManyTx): about a dozen ORM statements for one barrier. Kept here, unchanged, as the
// reference the set-based loader is checked against (test/barrier/evidence-many.test.ts): the facts it
// gives for a barrier are what the receipt of that barrier has always been built from.
import type { Tx } from "../../lib/platform/db/prisma";
import type { EvidenceFacts, OperationFact, ReconciliationFact, RunFact } from "../../lib/control/evidence/model";
import type { BarrierPhase } from "../../lib/control/barrier";
import { strongerMeaning, type ObservedMeaning } from "../../lib/control/barrier";
import type { OperationState } from "../../lib/control/types";
import { asEnvironmentEvidence, type EnvironmentMechanism } from "../../lib/control/evidence/environment";

/** Run ids of a barrier's subtree (the stopped run and its descendants), the stopped run first. */
async function subtreeRunsTx(tx: Tx, runId: string): Promise<{ id: string; lifecycle: string }[]> {
  return tx.$queryRawUnsafe<{ id: string; lifecycle: string }[]>(
    `SELECT c.id, c.lifecycle::text AS lifecycle FROM runs r JOIN runs c ON c.root_run_id = r.root_run_id AND r.id = ANY (c.path)
      WHERE r.id = $1 ORDER BY c.depth, c.created_at, c.id`,
    runId,
  );
}

/** This team's denied requests about the subtree's runs since `since` (another team's calls never count). */
async function countLateRequestsTx(tx: Tx, teamId: string, runIds: string[], since: Date): Promise<number> {
  const rows = await tx.$queryRawUnsafe<{ n: number }[]>(
    `SELECT count(*)::int AS n FROM gate_decisions
      WHERE team_id = $1 AND run_id = ANY ($2::text[]) AND at >= $3 AND decision = 'deny'`,
    teamId,
    runIds,
    since,
  );
  return rows[0]?.n ?? 0;
}

/** `user:<id>[ via key:…]` → the user's email; other actors as they are. */
function personOf(actor: string | null, email: Map<string, string>): string | null {
  if (!actor) return null;
  const m = /^user:([^ ]+)/.exec(actor);
  return m ? (email.get(m[1]!) ?? actor) : actor;
}

export async function referenceEvidenceFactsTx(
  tx: Tx,
  barrierId: string,
  now: Date,
): Promise<EvidenceFacts & { teamId: string; rootRunId: string }> {
  const b = await tx.barrier.findUniqueOrThrow({
    where: { id: barrierId },
    include: { run: { select: { rootRunId: true, epoch: true } } },
  });
  const runs = await subtreeRunsTx(tx, b.runId);
  const runIds = runs.map((r) => r.id);
  const [leases] = await tx.$queryRawUnsafe<{ root_total: number; root_active: number; desc_revoked: number; active: number }[]>(
    `SELECT count(*) FILTER (WHERE run_id = $2)::int AS root_total,
            count(*) FILTER (WHERE run_id = $2 AND revoked_at IS NULL AND valid_until > $3)::int AS root_active,
            count(*) FILTER (WHERE run_id <> $2 AND revoked_at IS NOT NULL)::int AS desc_revoked,
            count(*) FILTER (WHERE revoked_at IS NULL AND valid_until > $3)::int AS active
       FROM leases WHERE run_id = ANY ($1::text[])`,
    runIds,
    b.runId,
    now,
  );
  // Every operation that matters to the completion rule: not terminal, unknown, or ever settled or
  // reconciled — whichever barrier first saw it. Work that finished before any stop adds nothing.
  const ops = await tx.operation.findMany({
    where: {
      runId: { in: runIds },
      OR: [
        { state: { in: ["queued", "scheduled", "running", "aborted_unknown"] } },
        { settlements: { some: {} } },
        { reconciliation: { isNot: null } },
      ],
    },
    include: {
      settlements: { orderBy: { id: "desc" }, take: 1 },
      reconciliation: true,
      uncertainIntervals: { orderBy: { startedAt: "desc" }, take: 1 },
    },
    orderBy: [{ createdAt: "asc" }, { id: "asc" }],
  });
  const providerNames = [...new Set(ops.map((o) => o.providerName).filter((n): n is string => !!n))];
  const providers = providerNames.length
    ? new Set(
        (await tx.provider.findMany({ where: { teamId: b.teamId, name: { in: providerNames } }, select: { name: true } })).map(
          (p) => p.name,
        ),
      )
    : new Set<string>();
  const userIds = new Set<string>();
  for (const o of ops) {
    const r = o.reconciliation;
    if (r?.assigneeUserId) userIds.add(r.assigneeUserId);
    const m = /^user:([^ ]+)/.exec(r?.resolvedBy ?? "");
    if (m) userIds.add(m[1]!);
  }
  const users = userIds.size ? await tx.user.findMany({ where: { id: { in: [...userIds] } }, select: { id: true, email: true } }) : [];
  const email = new Map(users.map((u) => [u.id, u.email]));

  // Acknowledgments are kept on whichever barrier covered the run when it was reported.
  const ackRows = await tx.barrier.findMany({
    where: { teamId: b.teamId, run: { rootRunId: b.run.rootRunId } },
    select: { observedEvidence: true },
  });
  const acks = new Map<string, { meaning: ObservedMeaning; at: Date }>();
  for (const row of ackRows) {
    for (const a of Array.isArray(row.observedEvidence)
      ? (row.observedEvidence as { runId?: string; meaning?: string; at?: string }[])
      : []) {
      if (!a?.runId || !a.meaning || !a.at || !runIds.includes(a.runId)) continue;
      const prev = acks.get(a.runId);
      const meaning = strongerMeaning(prev?.meaning ?? null, a.meaning as ObservedMeaning);
      const at = prev && prev.at < new Date(a.at) ? prev.at : new Date(a.at);
      acks.set(a.runId, { meaning, at });
    }
  }

  const effects = await tx.effectReceipt.findMany({
    where: { operation: { runId: { in: runIds } } },
    include: { operation: { select: { operationId: true } } },
    orderBy: [{ committedAt: "asc" }, { id: "asc" }],
  });
  const claims = await tx.operationClaim.findMany({
    where: { operation: { runId: { in: runIds } } },
    include: { operation: { select: { operationId: true } } },
    orderBy: [{ claimedAt: "asc" }, { id: "asc" }],
  });
  const recoveries = await tx.recoveryItem.findMany({
    where: { operation: { runId: { in: runIds } } },
    include: { operation: { select: { operationId: true } }, assignee: { select: { email: true } } },
    orderBy: [{ createdAt: "asc" }, { id: "asc" }],
  });
  // A call's reservations are a list on its operation row, in the order the gate reserved them.
  const reservations = await tx.$queryRawUnsafe<
    {
      operationId: string;
      budget: string;
      unit: string;
      amount: number;
      actual: number | null;
      state: string;
      releaseCause: string | null;
    }[]
  >(
    `SELECT o.operation_id AS "operationId", r.budget, r.unit, r.amount::float8 AS amount, r.actual::float8 AS actual, r.state,
            r.release_cause AS "releaseCause"
       FROM operations o CROSS JOIN LATERAL unnest(o.budget_reservations) WITH ORDINALITY AS r
      WHERE o.run_id = ANY ($1::text[]) ORDER BY o.created_at, o.id, r.ordinality`,
    runIds,
  );
  const changers = await tx.user.findMany({
    where: { id: { in: recoveries.map((r) => /^user:([^ ]+)/.exec(r.changedBy ?? "")?.[1]).filter((x): x is string => !!x) } },
    select: { id: true, email: true },
  });
  const changerEmail = new Map(changers.map((u) => [u.id, u.email]));
  const personOrActor = (actor: string | null) => {
    const id = /^user:([^ ]+)/.exec(actor ?? "")?.[1];
    return (id && changerEmail.get(id)) ?? actor;
  };
  const environments = await tx.runEnvironment.findMany({
    where: { runId: { in: runIds } },
    include: { owner: { select: { email: true } } },
  });
  const envOf = new Map(environments.map((e) => [e.runId, e]));
  const resolverIds = environments.map((e) => /^user:([^ ]+)/.exec(e.resolvedBy ?? "")?.[1]).filter((x): x is string => !!x);
  const resolverEmail = new Map(
    (resolverIds.length ? await tx.user.findMany({ where: { id: { in: resolverIds } }, select: { id: true, email: true } }) : []).map(
      (u) => [u.id, u.email],
    ),
  );
  const receipts = await tx.stopReceipt.findMany({
    where: { barrierId },
    orderBy: { version: "asc" },
    select: { version: true, decision: true, digest: true, verifiedAt: true },
  });

  const operations: OperationFact[] = ops.map((o) => {
    const s = o.settlements[0] ?? null;
    const r = o.reconciliation;
    const rec: ReconciliationFact | null = r
      ? {
          id: r.id,
          status: r.status,
          assignee: r.assigneeUserId ? (email.get(r.assigneeUserId) ?? r.assigneeUserId) : null,
          assignedBy: r.assignedBy,
          assignedAt: r.assignedAt,
          resolution: r.resolution,
          evidence: r.evidence,
          resolvedAt: r.resolvedAt,
          resolvedBy: personOf(r.resolvedBy, email),
          cause: o.uncertainIntervals[0]?.cause ?? null,
        }
      : null;
    return {
      operationId: o.operationId,
      runId: o.runId,
      tool: o.tool,
      kind: o.kind,
      state: o.state as OperationState,
      providerName: o.providerName,
      hasProvider: !!o.providerName && providers.has(o.providerName),
      providerJob: o.providerJobId,
      finishedAt: o.finishedAt,
      settlement: s
        ? {
            barrierId: s.barrierId,
            stateAtBarrier: s.stateAtBarrier,
            cancelRequestedAt: s.cancelRequestedAt,
            providerResponse: s.providerResponse,
            effectExpected: s.effectExpected,
            effectObserved: s.effectObserved,
            effectCheckedAt: s.effectCheckedAt,
            settledState: s.settledState,
            settledAt: s.settledAt,
            settledReason: s.settledReason,
            attempts: s.attempts,
            lastError: s.lastError,
          }
        : null,
      reconciliation: rec,
    };
  });
  const runFacts: RunFact[] = runs.map((r) => ({
    id: r.id,
    lifecycle: r.lifecycle as RunFact["lifecycle"],
    acknowledgment: acks.get(r.id) ?? null,
    environment: (() => {
      const e = envOf.get(r.id);
      return e
        ? {
            mechanism: e.mechanism as EnvironmentMechanism,
            weakest: e.weakest,
            supervisedAt: e.supervisedAt,
            evidence: asEnvironmentEvidence(e.evidence),
            evidenceAt: e.evidenceAt,
            unknownSince: e.unknownSince,
            owner: e.owner?.email ?? e.ownerUserId,
            resolvedBy: resolverEmail.get(/^user:([^ ]+)/.exec(e.resolvedBy ?? "")?.[1] ?? "") ?? e.resolvedBy,
            resolvedAt: e.resolvedAt,
            resolutionEvidence: e.resolutionEvidence,
          }
        : null;
    })(),
  }));
  return {
    teamId: b.teamId,
    rootRunId: b.run.rootRunId,
    now,
    barrier: {
      id: b.id,
      runId: b.runId,
      requestedAt: b.requestedAt,
      requestedBy: b.requestedBy,
      reason: b.reason,
      newEpoch: b.newEpoch,
      enginePhase: b.phase as BarrierPhase,
      dispatchStoppedAt: b.dispatchStoppedAt,
      queuedCancelledAt: b.queuedCancelledAt,
      runsKilled: b.runsKilled,
      leasesRevoked: b.leasesRevoked,
      queuedCancelled: b.queuedCancelled,
      scheduledCancelled: b.scheduledCancelled,
      retriesCancelled: b.retriesCancelled,
      quietPeriodSeconds: b.quietPeriodSeconds,
      quietUntil: b.quietUntil,
    },
    runs: runFacts,
    leases: {
      rootLease: !leases || leases.root_total === 0 ? "none" : leases.root_active > 0 ? "active" : "revoked",
      descendantLeasesRevoked: leases?.desc_revoked ?? 0,
      active: leases?.active ?? 0,
    },
    currentEpoch: b.run.epoch,
    operations,
    effectReceipts: effects.map((e) => ({
      operationId: e.operation.operationId,
      providerOperationId: e.providerOperationId,
      committedAt: e.committedAt,
      rollbackOwner: e.rollbackOwner,
      source: e.source,
      detail: e.detail,
    })),
    claims: claims.map((c) => ({
      operationId: c.operation.operationId,
      outcome: c.outcome,
      providerOperationId: c.providerOperationId,
      reportedBy: c.reportedBy,
      claimedAt: c.claimedAt,
    })),
    recoveries: recoveries.map((r) => ({
      operationId: r.operation.operationId,
      state: r.state,
      settledBy: r.settledBy as "provider" | "person" | null,
      providerName: r.providerName,
      by: r.settledBy === "provider" ? r.providerName : personOrActor(r.changedBy),
      at: (r.settledBy === "provider" ? r.verifiedAt : r.changedAt)?.toISOString() ?? null,
      rollbackOwner: r.rollbackOwner,
      assignee: r.assignee?.email ?? r.assigneeUserId,
      note: r.note,
      evidence: r.evidence,
      verifiedAt: r.verifiedAt?.toISOString() ?? null,
      verifiedEffect: r.verifiedEffect,
    })),
    budgetReservations: reservations.map((r) => ({
      operationId: r.operationId,
      budget: r.budget,
      unit: r.unit,
      amount: String(r.amount),
      actual: r.actual === null ? null : String(r.actual),
      state: r.state as "held" | "settled" | "released",
      releaseCause: r.releaseCause ?? null,
    })),
    lateRequestsDenied: await countLateRequestsTx(tx, b.teamId, runIds, b.requestedAt),
    receipts: receipts.map((r) => ({ version: r.version, decision: r.decision, digest: r.digest, verifiedAt: r.verifiedAt })),
  };
}
