// Read model for the barrier page: phase, counts, the stop ladder and the sentences come from the one
// evidence model (lib/modules/barriers → lib/control/evidence), exactly as the API serves them; this file
// only shapes them for the page. Every in-flight operation of the subtree is listed with why it
// settled as it did (provider response, expected vs observed effect, who settled it).
import "server-only";
import { notFound } from "../../../platform/errors";
import type { Rung } from "../../../control/evidence/model";
import { barrierEvidence } from "../barriers";
import { prisma } from "../../../platform/db/prisma";
import { authorize } from "../../../platform/auth/authorize";
import type { Principal } from "../../../platform/auth/principal";
import { consoleTeam } from "../../../platform/auth/console-team";

export interface SettlementRow {
  id: string;
  operationId: string;
  runId: string;
  tool: string;
  providerName: string | null;
  providerJobId: string | null;
  stateAtBarrier: string | null;
  cancelRequestedAt: string | null;
  providerResponse: string | null;
  effectExpected: string | null;
  effectObserved: string | null;
  effectCheckedAt: string | null;
  settledState: string | null;
  settledBy: string | null;
  settledAt: string | null;
  settledReason: string | null;
  attempts: number;
  lastError: string | null;
  reconciliation: {
    id: string;
    status: string;
    assignee: string | null;
    resolution: string | null;
    resolvedBy: string | null;
    resolvedAt: string | null;
    evidence: string | null;
  } | null;
}

export interface BarrierDetail {
  id: string;
  runId: string;
  runTitle: string | null;
  teamId: string;
  phase: "revoking" | "settling" | "quiet" | "complete";
  requestedAt: string;
  requestedBy: string;
  reason: string;
  newEpoch: number;
  counts: {
    runs: number;
    runsKilled: number;
    leasesRevoked: number;
    queuedCancelled: number;
    scheduledCancelled: number;
    retriesCancelled: number;
    inFlight: number;
    pending: number;
    unknown: number;
    lateRequestsDenied: number;
  };
  quietUntil: string | null;
  quietPeriodSeconds: number | null;
  decision: "stopped_and_quiet" | "stop_incomplete" | null;
  completedAt: string | null;
  ladder: Rung[];
  sentences: string[];
  settlements: SettlementRow[];
  receipts: { version: number; decision: string; digest: string; createdAt: string }[];
}

const iso = (d: Date | null | undefined) => (d ? d.toISOString() : null);

export async function getConsoleBarrier(p: Principal, barrierId: string): Promise<BarrierDetail> {
  authorize(p, "run.read");
  const teamId = consoleTeam(p);
  const row = await prisma().barrier.findUnique({
    where: { id: barrierId },
    select: { teamId: true, completedAt: true, run: { select: { title: true } } },
  });
  if (!row || row.teamId !== teamId) throw notFound("barrier");
  const { facts, evidence: ev } = await barrierEvidence(p, barrierId);
  const f = facts.barrier;
  const c = ev.counts;
  const latest = facts.receipts.at(-1) ?? null;
  return {
    id: f.id,
    runId: f.runId,
    runTitle: row.run.title,
    teamId,
    phase: ev.phase,
    requestedAt: f.requestedAt.toISOString(),
    requestedBy: f.requestedBy,
    reason: f.reason,
    newEpoch: f.newEpoch,
    counts: {
      runs: c.runs,
      runsKilled: c.runsKilled,
      leasesRevoked: f.leasesRevoked,
      queuedCancelled: c.queuedCancelled,
      scheduledCancelled: c.scheduledCancelled,
      retriesCancelled: c.retriesCancelled,
      inFlight: c.inFlight,
      pending: c.pending,
      unknown: c.unknown,
      lateRequestsDenied: c.lateRequestsDenied,
    },
    quietUntil: iso(f.quietUntil),
    quietPeriodSeconds: f.quietPeriodSeconds,
    decision: latest?.decision ?? null,
    completedAt: iso(row.completedAt),
    ladder: ev.ladder,
    sentences: ev.sentences,
    settlements: ev.operations
      .filter((o) => o.inFlight)
      .map(({ op, outcome, settledBy, settledAt }) => ({
        id: op.operationId,
        operationId: op.operationId,
        runId: op.runId,
        tool: op.tool,
        providerName: op.providerName,
        providerJobId: op.providerJob,
        stateAtBarrier: op.settlement?.stateAtBarrier ?? null,
        cancelRequestedAt: iso(op.settlement?.cancelRequestedAt),
        providerResponse: op.settlement?.providerResponse ?? null,
        effectExpected: op.settlement?.effectExpected ?? null,
        effectObserved: op.settlement?.effectObserved ?? null,
        effectCheckedAt: iso(op.settlement?.effectCheckedAt),
        settledState:
          outcome === "pending"
            ? null
            : outcome === "unknown"
              ? "unknown"
              : outcome === "effect_present"
                ? "completed_and_verified"
                : "cancelled_without_effect",
        settledBy,
        settledAt: iso(settledAt),
        settledReason:
          op.settlement?.settledReason ??
          (outcome === "unknown" ? "its executor gave up on the call and could not say whether it took effect" : null),
        attempts: op.settlement?.attempts ?? 0,
        lastError: op.settlement?.lastError ?? null,
        reconciliation: op.reconciliation
          ? {
              id: op.reconciliation.id,
              status: op.reconciliation.status,
              assignee: op.reconciliation.assignee,
              resolution: op.reconciliation.resolution,
              resolvedBy: op.reconciliation.resolvedBy,
              resolvedAt: iso(op.reconciliation.resolvedAt),
              evidence: op.reconciliation.evidence,
            }
          : null,
      })),
    receipts: [...facts.receipts]
      .reverse()
      .map((r) => ({ version: r.version, decision: r.decision, digest: r.digest, createdAt: r.verifiedAt.toISOString() })),
  };
}
