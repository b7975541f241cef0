// Reads of barriers and stop receipts (docs/architecture.md#, #the-stop-receipt, #the-wire-contract): the barrier view with its stop ladder
// (lib/control/ladder), receipt versions, and digest verification. Team-scoped: another team's
// barrier answers 404.
import "server-only";
import { prisma } from "../db/prisma";
import { notFound } from "../errors";
import { buildLadder, type Rung } from "../control/ladder";
import { canonicalJson, sha256Hex } from "../control/canonical";
import { inReadingOrder, verifyReceiptBody } from "../control/receipt";
import { authorize, assertTeam } from "./authorize";
import type { Principal } from "./principal";
import { countLateRequestsTx } from "./receipts";
import { subtreeRunIdsTx } from "./settlements";

const iso = (d: Date | null | undefined) => (d ? d.toISOString() : null);

async function loadBarrier(p: Principal, barrierId: string) {
  authorize(p, "run.read");
  const b = await prisma().barrier.findUnique({
    where: { id: barrierId },
    include: {
      settlements: { orderBy: { id: "asc" }, include: { operation: true, reconciliation: true } },
      receipts: { orderBy: { version: "asc" }, select: { version: true, decision: true, digest: true, verifiedAt: true } },
    },
  });
  if (!b) throw notFound("barrier");
  assertTeam(p, b.teamId, "barrier");
  return b;
}

export async function getBarrierView(p: Principal, barrierId: string) {
  const b = await loadBarrier(p, barrierId);
  const db = prisma();
  const runIds = await subtreeRunIdsTx(db as never, b.runId);
  const late = await countLateRequestsTx(db as never, runIds, b.requestedAt);
  const assignees = [...new Set(b.settlements.map((s) => s.reconciliation?.assigneeUserId).filter((x): x is string => !!x))];
  const users = assignees.length ? await db.user.findMany({ where: { id: { in: assignees } }, select: { id: true, email: true } }) : [];
  const email = new Map(users.map((u) => [u.id, u.email]));
  const by = (st: string | null) => b.settlements.filter((s) => s.settledState === st).length;
  const unknown = by("unknown");
  const pending = by(null);
  const open = b.settlements.filter((s) => s.reconciliation && s.reconciliation.status !== "resolved");
  const acks = Array.isArray(b.observedEvidence) ? (b.observedEvidence as unknown[]) : [];
  const rungs: Rung[] = buildLadder({
    requestedAt: b.requestedAt, requestedBy: b.requestedBy, reason: b.reason, phase: b.phase, decision: b.decision,
    observed: b.observedAt && b.observedMeaning ? { at: b.observedAt, meaning: b.observedMeaning, acks } : null,
    dispatchStoppedAt: b.dispatchStoppedAt, queuedCancelledAt: b.queuedCancelledAt, quiescedAt: b.quiescedAt,
    completedAt: b.completedAt, quietUntil: b.quietUntil, newEpoch: b.newEpoch,
    runsKilled: b.runsKilled, leasesRevoked: b.leasesRevoked, queuedCancelled: b.queuedCancelled,
    scheduledCancelled: b.scheduledCancelled, retriesCancelled: b.retriesCancelled, inFlight: b.inFlight,
    pending, unknown, lateRequestsDenied: late,
    reconciliationHolders: open.map((s) => (s.reconciliation!.assigneeUserId ? email.get(s.reconciliation!.assigneeUserId) ?? "unknown user" : "unassigned")),
  });
  return {
    barrierId: b.id, runId: b.runId, teamId: b.teamId, phase: b.phase, decision: b.decision,
    requestedAt: b.requestedAt.toISOString(), requestedBy: b.requestedBy, reason: b.reason, newEpoch: b.newEpoch, policy: b.policy,
    ladder: Object.fromEntries(rungs.map(({ id, ...rest }) => [id, rest])) as Record<string, Omit<Rung, "id">>,
    counts: {
      runsKilled: b.runsKilled, leasesRevoked: b.leasesRevoked, queuedCancelled: b.queuedCancelled,
      scheduledCancelled: b.scheduledCancelled, retriesCancelled: b.retriesCancelled, inFlight: b.inFlight, pending,
      cancelledWithoutEffect: by("cancelled_without_effect"), completedAndVerified: by("completed_and_verified"), unknown,
      openReconciliations: open.length, lateRequestsDenied: late,
    },
    quietPeriodSeconds: b.quietPeriodSeconds, quietUntil: iso(b.quietUntil), completedAt: iso(b.completedAt),
    settlements: b.settlements.map((s) => ({
      settlementId: s.id, operationId: s.operation.operationId, runId: s.operation.runId, tool: s.operation.tool,
      provider: s.operation.providerName, providerJobId: s.operation.providerJobId, stateAtBarrier: s.stateAtBarrier,
      cancelRequestedAt: iso(s.cancelRequestedAt), providerResponse: s.providerResponse, providerRespondedAt: iso(s.providerRespondedAt),
      effectExpected: s.effectExpected, effectObserved: s.effectObserved, effectCheckedAt: iso(s.effectCheckedAt), attempts: s.attempts,
      settledState: s.settledState, settledAt: iso(s.settledAt), settledReason: s.settledReason,
      reconciliation: s.reconciliation ? {
        reconciliationId: s.reconciliation.id, status: s.reconciliation.status,
        assignee: s.reconciliation.assigneeUserId ? email.get(s.reconciliation.assigneeUserId) ?? null : null,
        resolution: s.reconciliation.resolution,
      } : null,
    })),
    receipts: b.receipts.map((r) => ({ version: r.version, decision: r.decision, digest: r.digest, verifiedAt: r.verifiedAt.toISOString() })),
  };
}
export type BarrierView = Awaited<ReturnType<typeof getBarrierView>>;

export interface ReceiptRecord {
  barrierId: string; version: number; decision: string; digest: string; verifiedAt: string;
  body: Record<string, unknown>; canonical: string; versions: number[];
}

export async function getReceipt(p: Principal, barrierId: string, version?: number): Promise<ReceiptRecord> {
  const b = await loadBarrier(p, barrierId);
  const versions = b.receipts.map((r) => r.version);
  const want = version ?? versions.at(-1);
  if (want === undefined) throw notFound("receipt (the barrier has not issued one yet)");
  const r = await prisma().stopReceipt.findUnique({ where: { barrierId_version: { barrierId, version: want } } });
  if (!r) throw notFound(`receipt version ${want}`);
  return {
    barrierId, version: r.version, decision: r.decision, digest: r.digest, verifiedAt: r.verifiedAt.toISOString(),
    body: inReadingOrder(r.body as Record<string, unknown>), canonical: r.canonical, versions,
  };
}

export async function listReceiptVersions(p: Principal, barrierId: string) {
  const b = await loadBarrier(p, barrierId);
  return b.receipts.map((r) => ({ version: r.version, decision: r.decision, digest: r.digest, verifiedAt: r.verifiedAt.toISOString() }));
}

/** Both checks: the stored canonical text hashes to the digest, and the served body canonicalizes to that text. */
export async function verifyReceipt(p: Principal, barrierId: string, version?: number) {
  const r = await getReceipt(p, barrierId, version);
  const { digest: _d, ...rest } = r.body;
  const canonicalMatches = canonicalJson(rest) === r.canonical;
  const recomputed = sha256Hex(r.canonical);
  const body = verifyReceiptBody(r.body);
  return { ok: canonicalMatches && recomputed === r.digest && body.ok, version: r.version, digest: r.digest, recomputed, canonicalMatches };
}

/** The barrier covering a run (on it or an ancestor), for the run page and CLI. */
export async function barrierForRun(p: Principal, runId: string): Promise<{ barrierId: string; phase: string; decision: string | null } | null> {
  authorize(p, "run.read");
  const run = await prisma().run.findUnique({ where: { id: runId }, select: { teamId: true, path: true } });
  if (!run) throw notFound("run");
  assertTeam(p, run.teamId, "run");
  const b = await prisma().barrier.findFirst({ where: { runId: { in: run.path } }, orderBy: { requestedAt: "desc" }, select: { id: true, phase: true, decision: true } });
  return b ? { barrierId: b.id, phase: b.phase, decision: b.decision } : null;
}
