// Issuing stop receipts. Transaction-level: the engine (after the quiet period), reconciliation writes
// and late reports call issueReceiptTx inside their own transaction, with the barrier row locked, so a
// version number is taken exactly once and the receipt commits together with the change that caused
// it. Old versions are never touched. The body comes from the evidence model over the whole subtree
// (lib/control/evidence), loaded by the one facts loader (lib/dal/internal/evidence).
import "server-only";
import type { Tx } from "../../db/prisma";
import { newId } from "../../ids";
import { buildReceipt } from "../../control/evidence/receipt";
import { notifyControl } from "./notify";
import { appendAudit, appendAudits, type AuditInput } from "../audit";
import { coveringBarriersTx, loadEvidenceFactsTx } from "./evidence";
import { recordAuditCheckpointTx, type AuditHead } from "./audit-checkpoints";
import { emitEventTx } from "./events";
import { signStatement, statementFor, STOP_RECEIPT_PREDICATE } from "../../control/evidence/signing";
import { currentSigner } from "../../integrations/keystore";

/**
 * Issues the next receipt version. The caller holds the barrier row lock (SELECT … FOR UPDATE) and has
 * checked that a receipt is due. Leaves the barrier `complete` with the receipt's decision.
 */
export async function issueReceiptTx(
  tx: Tx,
  barrierId: string,
  verifiedAt = new Date(),
  actor = "system:barrier-engine",
  batch?: ReceiptBatch,
): Promise<{ version: number; decision: "stopped_and_quiet" | "stop_incomplete"; digest: string }> {
  const facts = await loadEvidenceFactsTx(tx, barrierId, verifiedAt);
  const previous = facts.receipts.at(-1) ?? null;
  const version = (previous?.version ?? 0) + 1;
  // The audit head this receipt was issued at, also kept as a checkpoint apart from the chain. A batch
  // reads and records it once: its receipts are issued together, at one head (their own audit rows all
  // come after it, as a single receipt's does).
  let auditHead: AuditHead | null;
  if (batch) {
    if (!batch.heads.has(facts.teamId)) batch.heads.set(facts.teamId, await recordAuditCheckpointTx(tx, facts.teamId, "receipt"));
    auditHead = batch.heads.get(facts.teamId) ?? null;
  } else {
    auditHead = await recordAuditCheckpointTx(tx, facts.teamId, "receipt");
  }
  const { body, canonical, digest, decision, evidence } = buildReceipt(facts, {
    version,
    previousDigest: previous?.digest ?? null,
    verifiedAt,
    auditHead,
  });
  // Signed at issue time with the deployment key: the in-toto subject is the receipt digest, the
  // predicate the body as issued (digest included), so the envelope alone can be verified offline.
  const signer = currentSigner();
  const envelope = signStatement(
    statementFor(STOP_RECEIPT_PREDICATE, { name: `stop-receipt/${barrierId}/v${version}`, sha256: digest }, body),
    signer,
  );
  await tx.stopReceipt.create({
    data: {
      id: newId("rcpt"),
      barrierId,
      version,
      canonical,
      body: body as never,
      decision,
      verifiedAt,
      digest,
      envelope: envelope as never,
      keyId: signer.keyId,
    },
  });
  await tx.barrier.update({
    where: { id: barrierId },
    data: {
      phase: "complete",
      decision,
      completedAt: verifiedAt,
      lateRequestsDenied: evidence.counts.lateRequestsDenied,
      lastSettledAt: evidence.lastSettledAt,
      quiescedAt: evidence.quiescedAt,
      claimedBy: null,
      claimExpiresAt: null,
    },
  });
  if (version === 1) {
    await emitEventTx(tx, {
      teamId: facts.teamId,
      type: "barrier.complete",
      runId: facts.barrier.runId,
      subject: barrierId,
      data: { barrier_id: barrierId, decision },
    });
  }
  await emitEventTx(tx, {
    teamId: facts.teamId,
    type: "receipt.issued",
    runId: facts.barrier.runId,
    subject: barrierId,
    data: { barrier_id: barrierId, version, decision, digest, previous_digest: previous?.digest ?? null, key_id: signer.keyId },
  });
  await notifyControl(tx, { kind: "receipt", teamId: facts.teamId, rootRunId: facts.rootRunId, barrierId });
  // Last: the append takes the team's audit lock, held until this transaction commits; every statement
  // after it would be one more that every other writer of the team's audit chain waits for (a fleet stop
  // issues thousands of receipts and starts thousands of barriers, all on one chain). A batch appends
  // all its receipts' rows at its end, under one acquisition (flushReceiptBatchTx).
  const row = { actor, action: "barrier.receipt", target: barrierId, after: { version, decision, digest } };
  if (batch) batch.audit.push({ teamId: facts.teamId, ...row });
  else await appendAudit(tx, { teamId: facts.teamId, ...row });
  return { version, decision, digest };
}

/** Receipts issued together in one transaction (the barrier engine's batch: lib/dal/barrier-engine.ts). */
export interface ReceiptBatch {
  heads: Map<string, AuditHead | null>;
  audit: AuditInput[];
}

export const newReceiptBatch = (): ReceiptBatch => ({ heads: new Map(), audit: [] });

/** The batch's audit rows, per team, each team's under one acquisition of its audit lock: call last. */
export async function flushReceiptBatchTx(tx: Tx, batch: ReceiptBatch): Promise<void> {
  const byTeam = new Map<string | null, AuditInput[]>();
  for (const a of batch.audit) byTeam.set(a.teamId, [...(byTeam.get(a.teamId) ?? []), a]);
  for (const [teamId, rows] of byTeam) await appendAudits((sql, params) => tx.$queryRawUnsafe(sql, ...params), teamId, rows);
  batch.audit = [];
}

/** Locks the barrier row; the lock orders receipt issuance, late reports and reconciliation writes. */
export async function lockBarrierTx(tx: Tx, barrierId: string): Promise<void> {
  await tx.$queryRawUnsafe(`SELECT id FROM barriers WHERE id = $1 FOR UPDATE`, barrierId);
}

/**
 * A fact about `runId` changed (a person settled an unknown, an owner was named): every barrier whose
 * subtree holds the run and that already issued a receipt issues the next version, so no receipt of
 * the tree keeps saying what is no longer true. Barriers still working include it in their first one.
 * Locks oldest first (the same order everywhere). Returns the versions issued, by barrier.
 */
export async function reissueCoveringTx(tx: Tx, runId: string, actor: string): Promise<{ barrierId: string; version: number }[]> {
  const out: { barrierId: string; version: number }[] = [];
  for (const b of await coveringBarriersTx(tx, runId)) {
    await lockBarrierTx(tx, b.id);
    const cur = await tx.barrier.findUniqueOrThrow({ where: { id: b.id }, select: { phase: true } });
    if (cur.phase !== "complete") continue;
    out.push({ barrierId: b.id, version: (await issueReceiptTx(tx, b.id, new Date(), actor)).version });
  }
  return out;
}
