// Read model for the barrier page: phase, counts, the stop ladder and the sentences come from the one
// evidence model (lib/modules/barriers → lib/control/evidence), exactly as the API serves them; this file
// only shapes them for the page. Every in-flight operation of the subtree is listed with why it
// settled as it did, in the settlement's one read shape (lib/schemas/barriers.ts).
import "server-only";
import { notFound } from "../../../platform/errors";
import { unknownWhy, type Rung } from "../../../control/evidence/model";
import { barrierEvidence } from "../barriers";
import { prisma } from "../../../platform/db/prisma";
import { authorize } from "../../../platform/auth/authorize";
import type { Principal } from "../../../platform/auth/principal";
import { consoleTeam } from "../../../platform/auth/console-team";
import type { ReceiptRef, Settlement } from "../../../schemas/barriers";
import { toReceiptRef, toSettlement } from "../internal/read-shapes";

/** A settlement as the API serves it, and what the page adds: the engine's attempts and last error. */
/** `whyUnknown`: an unknown's reason in the evidence sentences' words (the open-work queue says the same). */
export type SettlementRow = Settlement & { attempts: number; lastError: string | null; whyUnknown: string | null };

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
  /** newest first */
  receipts: ReceiptRef[];
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
      .map((o) => ({
        ...toSettlement(o),
        attempts: o.op.settlement?.attempts ?? 0,
        lastError: o.op.settlement?.lastError ?? null,
        whyUnknown: o.outcome === "unknown" ? unknownWhy(o.op) : null,
      })),
    receipts: [...facts.receipts].reverse().map(toReceiptRef),
  };
}
