// Reads of barriers and stop receipts: the barrier view with its stop ladder, counts and sentences —
// all derived by the one evidence model (lib/control/evidence) from the one facts loader — receipt
// versions, and digest verification by the one verifier. Team-scoped: another team's barrier is 404.
// The API, the console read model, the CLI and the downloads all read through here.
import "server-only";
import { prisma } from "../../platform/db/prisma";
import { notFound } from "../../platform/errors";
import { deriveEvidence, type Evidence, type EvidenceFacts, type Rung, type RungId } from "../../control/evidence/model";
import { inReadingOrder, verifyReceipt as verifyReceiptRecord, type ReceiptCheck } from "../../control/evidence/receipt";
import { authorize, assertTeam } from "../../platform/auth/authorize";
import type { Principal } from "../../platform/auth/principal";
import { loadEvidenceFactsTx } from "./internal/evidence";
import { toReceiptRef, toSettlement } from "./internal/read-shapes";
import { verifyEnvelope } from "../../control/evidence/signing";
import { publicKeys } from "../../platform/signing/keystore";
import type { ReceiptRef, StopReceipt } from "../../schemas/barriers";

const iso = (d: Date | null | undefined) => (d ? d.toISOString() : null);

async function visibleBarrier(p: Principal, barrierId: string) {
  authorize(p, "run.read");
  const b = await prisma().barrier.findUnique({
    where: { id: barrierId },
    select: { id: true, teamId: true, runId: true, quietPeriodSeconds: true, completedAt: true, decision: true, policy: true },
  });
  if (!b) throw notFound("barrier");
  assertTeam(p, b.teamId, "barrier");
  return b;
}

/** The facts of the barrier's subtree and what the evidence model derives from them, now. */
export async function barrierEvidence(
  p: Principal,
  barrierId: string,
  now = new Date(),
): Promise<{ facts: EvidenceFacts & { teamId: string }; evidence: Evidence }> {
  await visibleBarrier(p, barrierId);
  const facts = await prisma().$transaction((tx) => loadEvidenceFactsTx(tx, barrierId, now), { isolationLevel: "RepeatableRead" });
  return { facts, evidence: deriveEvidence(facts) };
}

export async function getBarrierView(p: Principal, barrierId: string) {
  const b = await visibleBarrier(p, barrierId);
  const { facts, evidence: ev } = await barrierEvidence(p, barrierId);
  const f = facts.barrier;
  const c = ev.counts;
  return {
    barrierId: f.id,
    runId: f.runId,
    teamId: facts.teamId,
    phase: ev.phase,
    decision: facts.receipts.at(-1)?.decision ?? null,
    currentDecision: ev.decision,
    requestedAt: f.requestedAt.toISOString(),
    requestedBy: f.requestedBy,
    reason: f.reason,
    newEpoch: f.newEpoch,
    policy: b.policy,
    ladder: Object.fromEntries(ev.ladder.map(({ id, ...rest }) => [id, rest])) as Record<RungId, Omit<Rung, "id">>,
    counts: {
      runs: c.runs,
      runsObserved: c.runsObserved,
      runsKilled: c.runsKilled,
      leasesRevoked: f.leasesRevoked,
      activeLeases: c.activeLeases,
      queuedCancelled: c.queuedCancelled,
      scheduledCancelled: c.scheduledCancelled,
      retriesCancelled: c.retriesCancelled,
      inFlight: c.inFlight,
      pending: c.pending,
      cancelledWithoutEffect: c.cancelledWithoutEffect,
      completedAndVerified: c.completedAndVerified,
      unknown: c.unknown,
      settledByProvider: c.settledByProvider,
      reportedByExecutor: c.settledByExecutor,
      reconciledByPerson: c.reconciledByPerson,
      openReconciliations: c.openReconciliations,
      lateRequestsDenied: c.lateRequestsDenied,
    },
    sentences: ev.sentences,
    quietPeriodSeconds: f.quietPeriodSeconds,
    quietUntil: iso(f.quietUntil),
    completedAt: iso(b.completedAt),
    settlements: ev.operations.filter((o) => o.inFlight).map(toSettlement),
    receipts: facts.receipts.map(toReceiptRef),
  };
}
export type BarrierView = Awaited<ReturnType<typeof getBarrierView>>;

export interface ReceiptRecord {
  barrierId: string;
  runId: string;
  version: number;
  latestVersion: number;
  decision: "stopped_and_quiet" | "stop_incomplete";
  digest: string;
  verifiedAt: string;
  createdAt: string;
  /** The body as served (reading order), digest included: the receipt's one read shape. */
  body: StopReceipt;
  canonical: string;
  /** Every issued version, oldest first. */
  versions: ReceiptRef[];
  check: ReceiptCheck;
  /** The DSSE envelope signed at issue time (null for receipts issued before signing existed). */
  envelope: unknown;
  /** The envelope checked against this deployment's published public keys and the recorded digest. */
  signature: SignatureCheck;
}

export interface SignatureCheck {
  valid: boolean;
  keyId: string | null;
  detail: string;
}

/** A stored envelope against the deployment's public keys: the signature verifies and signs this digest. */
export function checkStoredSignature(envelope: unknown, digest: string): SignatureCheck {
  if (!envelope) return { valid: false, keyId: null, detail: "this version was issued before receipts were signed" };
  let keys: Map<string, string>;
  try {
    keys = new Map(publicKeys().map((k) => [k.keyid, k.public_key_pem] as const));
  } catch (e) {
    return { valid: false, keyId: null, detail: `the signing keys cannot be read: ${(e as Error).message}` };
  }
  const c = verifyEnvelope(envelope, keys);
  if (!c.ok) return { valid: false, keyId: null, detail: c.detail };
  if (c.statement.subject[0]?.digest.sha256 !== digest)
    return { valid: false, keyId: c.keyId, detail: "the signed statement names a different digest" };
  return { valid: true, keyId: c.keyId, detail: "Ed25519 signature over the DSSE envelope verifies with a published key" };
}

/** null while no receipt has been issued; 404 for another team's barrier or a version that does not exist. */
export async function findReceipt(p: Principal, barrierId: string, version?: number): Promise<ReceiptRecord | null> {
  const b = await visibleBarrier(p, barrierId);
  const versions = await prisma().stopReceipt.findMany({
    where: { barrierId },
    orderBy: { version: "asc" },
    select: { version: true, decision: true, digest: true, verifiedAt: true },
  });
  const want = version ?? versions.at(-1)?.version;
  if (want === undefined) return null;
  const r = await prisma().stopReceipt.findUnique({ where: { barrierId_version: { barrierId, version: want } } });
  if (!r) throw notFound(`receipt version ${want}`);
  const body = inReadingOrder(r.body as Record<string, unknown>) as StopReceipt;
  return {
    barrierId,
    runId: b.runId,
    version: r.version,
    latestVersion: versions.at(-1)!.version,
    decision: r.decision,
    digest: r.digest,
    verifiedAt: r.verifiedAt.toISOString(),
    createdAt: r.createdAt.toISOString(),
    body,
    canonical: r.canonical,
    versions: versions.map(toReceiptRef),
    check: verifyReceiptRecord({ body, canonical: r.canonical, digest: r.digest }),
    envelope: r.envelope ?? null,
    signature: checkStoredSignature(r.envelope, r.digest),
  };
}

export async function getReceipt(p: Principal, barrierId: string, version?: number): Promise<ReceiptRecord> {
  const r = await findReceipt(p, barrierId, version);
  if (!r) throw notFound("receipt (the barrier has not issued one yet)");
  return r;
}

/** The stored body, the stored canonical text and the recorded digest agree (the one verifier). */
export async function verifyReceipt(p: Principal, barrierId: string, version?: number) {
  const r = await getReceipt(p, barrierId, version);
  return { ok: r.check.ok, version: r.version, digest: r.digest, recomputed: r.check.recomputed, detail: r.check.detail };
}
