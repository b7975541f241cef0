// Read model for the barrier page: phase, counts, the stop ladder, and every settlement with why it
// settled as it did (provider response, expected vs observed effect, reconciliation holder).
import "server-only";
import { prisma } from "../../db/prisma";
import { notFound } from "../../errors";
import { authorize } from "../authorize";
import type { Principal } from "../principal";
import { consoleTeam } from "./team";
import { ladderOf, type Rung } from "./ladder";

export interface SettlementRow {
  id: string; operationId: string; runId: string; tool: string; providerName: string | null; providerJobId: string | null;
  stateAtBarrier: string; cancelRequestedAt: string | null; providerResponse: string | null; providerRespondedAt: string | null;
  effectExpected: string | null; effectObserved: string | null; effectCheckedAt: string | null;
  settledState: string | null; settledAt: string | null; settledReason: string | null; attempts: number; lastError: string | null;
  reconciliation: { id: string; status: string; assignee: string | null; resolution: string | null } | null;
}

export interface BarrierDetail {
  id: string; runId: string; runTitle: string | null; teamId: string;
  phase: "revoking" | "settling" | "quiet" | "complete";
  requestedAt: string; requestedBy: string; reason: string; newEpoch: number;
  counts: { runsKilled: number; leasesRevoked: number; queuedCancelled: number; scheduledCancelled: number; retriesCancelled: number; inFlight: number; lateRequestsDenied: number };
  quietUntil: string | null; quietPeriodSeconds: number | null;
  decision: "stopped_and_quiet" | "stop_incomplete" | null; completedAt: string | null;
  ladder: Rung[];
  settlements: SettlementRow[];
  receipts: { version: number; decision: string; digest: string; createdAt: string }[];
}

const iso = (d: Date | null | undefined) => (d ? d.toISOString() : null);

export async function getConsoleBarrier(p: Principal, barrierId: string): Promise<BarrierDetail> {
  authorize(p, "run.read");
  const teamId = consoleTeam(p);
  const db = prisma();
  const b = await db.barrier.findUnique({
    where: { id: barrierId },
    include: {
      run: { select: { title: true } },
      settlements: {
        orderBy: { id: "asc" },
        include: { operation: true, reconciliation: true },
      },
      receipts: { orderBy: { version: "desc" }, select: { version: true, decision: true, digest: true, createdAt: true } },
    },
  });
  if (!b || b.teamId !== teamId) throw notFound("barrier");
  const assigneeIds = [...new Set(b.settlements.map((s) => s.reconciliation?.assigneeUserId).filter((x): x is string => !!x))];
  const users = assigneeIds.length ? await db.user.findMany({ where: { id: { in: assigneeIds } }, select: { id: true, email: true } }) : [];
  const email = new Map(users.map((u) => [u.id, u.email]));

  const settled = { cancelledWithoutEffect: 0, completedAndVerified: 0, unknown: 0, pending: 0 };
  let openReconciliations = 0;
  for (const s of b.settlements) {
    if (s.settledState === "cancelled_without_effect") settled.cancelledWithoutEffect++;
    else if (s.settledState === "completed_and_verified") settled.completedAndVerified++;
    else if (s.settledState === "unknown") settled.unknown++;
    else settled.pending++;
    if (s.reconciliation && s.reconciliation.status !== "resolved") openReconciliations++;
  }
  // A resolved reconciliation no longer counts as unknown for the ladder: its evidence is recorded.
  const unresolvedUnknown = b.settlements.filter((s) => s.settledState === "unknown" && s.reconciliation?.status !== "resolved").length;

  return {
    id: b.id, runId: b.runId, runTitle: b.run.title, teamId: b.teamId, phase: b.phase,
    requestedAt: b.requestedAt.toISOString(), requestedBy: b.requestedBy, reason: b.reason, newEpoch: b.newEpoch,
    counts: {
      runsKilled: b.runsKilled, leasesRevoked: b.leasesRevoked, queuedCancelled: b.queuedCancelled, scheduledCancelled: b.scheduledCancelled,
      retriesCancelled: b.retriesCancelled, inFlight: b.inFlight, lateRequestsDenied: b.lateRequestsDenied,
    },
    quietUntil: iso(b.quietUntil), quietPeriodSeconds: b.quietPeriodSeconds, decision: b.decision, completedAt: iso(b.completedAt),
    ladder: ladderOf({
      phase: b.phase, requestedAt: b.requestedAt.toISOString(), requestedBy: b.requestedBy, reason: b.reason,
      observedAt: iso(b.observedAt), observedMeaning: b.observedMeaning, dispatchStoppedAt: iso(b.dispatchStoppedAt),
      queuedCancelledAt: iso(b.queuedCancelledAt), queuedCancelled: b.queuedCancelled, scheduledCancelled: b.scheduledCancelled, retriesCancelled: b.retriesCancelled,
      quiescedAt: iso(b.quiescedAt), inFlight: b.inFlight, lastSettledAt: iso(b.lastSettledAt),
      settled: { ...settled, unknown: unresolvedUnknown }, openReconciliations,
      quietUntil: iso(b.quietUntil), completedAt: iso(b.completedAt), decision: b.decision,
    }),
    settlements: b.settlements.map((s) => ({
      id: s.id, operationId: s.operation.operationId, runId: s.operation.runId, tool: s.operation.tool,
      providerName: s.operation.providerName, providerJobId: s.operation.providerJobId, stateAtBarrier: s.stateAtBarrier,
      cancelRequestedAt: iso(s.cancelRequestedAt), providerResponse: s.providerResponse, providerRespondedAt: iso(s.providerRespondedAt),
      effectExpected: s.effectExpected, effectObserved: s.effectObserved, effectCheckedAt: iso(s.effectCheckedAt),
      settledState: s.settledState, settledAt: iso(s.settledAt), settledReason: s.settledReason, attempts: s.attempts, lastError: s.lastError,
      reconciliation: s.reconciliation ? {
        id: s.reconciliation.id, status: s.reconciliation.status,
        assignee: s.reconciliation.assigneeUserId ? email.get(s.reconciliation.assigneeUserId) ?? s.reconciliation.assigneeUserId : null,
        resolution: s.reconciliation.resolution,
      } : null,
    })),
    receipts: b.receipts.map((r) => ({ version: r.version, decision: r.decision, digest: r.digest, createdAt: r.createdAt.toISOString() })),
  };
}
