// Issuing stop receipts. Transaction-level: the engine (after the quiet period), reconciliation writes
// and late reports call issueReceiptTx inside their own transaction, with the barrier row locked, so a
// version number is taken exactly once and the receipt commits together with the change that caused
// it. Old versions are never touched. The body comes from the evidence model over the whole subtree
// (lib/control/evidence), loaded by the one facts loader (lib/modules/internal/evidence).
import "server-only";
import type { Tx } from "../../../platform/db/prisma";
import { newId } from "../../../platform/ids";
import { buildReceipt } from "../../../control/evidence/receipt";
import { notifyControlMany, type ControlEvent } from "../../../platform/db/notify";
import { appendAudit, appendAudits, type AuditInput } from "../../audit/audit";
import { coveringBarriersTx, loadEvidenceFactsManyTx, type BarrierFacts } from "./evidence";
import { deriveEvidence } from "../../../control/evidence/model";
import { recordAuditCheckpointTx, type AuditHead } from "../../audit/checkpoints";
import { emitEventsTx, type EmitInput } from "../../webhooks/emit";
import { signStatement, statementFor, STOP_RECEIPT_PREDICATE } from "../../../control/evidence/signing";
import { currentSigner } from "../../../platform/signing/keystore";

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
): Promise<IssuedReceipt> {
  return (await issueReceiptsTx(tx, [barrierId], verifiedAt, actor, batch)).get(barrierId)!;
}

export interface IssuedReceipt {
  version: number;
  decision: "stopped_and_quiet" | "stop_incomplete";
  digest: string;
}

/**
 * issueReceiptTx for many barriers at once (docs/fleet-stop.md#at-scale; the one-barrier form is this with
 * one id): the caller holds every barrier's row lock and has checked that each receipt is due. Each
 * barrier's receipt is built from its own facts (the set-based loader) by the same model and signed as
 * one alone is; then the receipts, the barriers' completion, the events and the notifications are written
 * in one statement each for the whole set, and the audit rows last.
 */
export async function issueReceiptsTx(
  tx: Tx,
  barrierIds: string[],
  verifiedAt = new Date(),
  actor = "system:barrier-engine",
  batch?: ReceiptBatch,
): Promise<Map<string, IssuedReceipt>> {
  const out = new Map<string, IssuedReceipt>();
  if (barrierIds.length === 0) return out;
  let all = await loadEvidenceFactsManyTx(tx, barrierIds, verifiedAt);
  // An environment this receipt is the first to call unknown gets its owner first, so the receipt names them.
  const audits: AuditInput[] = await openEnvironmentUnknownsTx(tx, all, verifiedAt, actor);
  if (audits.length > 0) all = await loadEvidenceFactsManyTx(tx, barrierIds, verifiedAt);
  // The audit head these receipts were issued at, also kept as a checkpoint apart from the chain: read
  // and recorded once per team (a batch's receipts are issued together, at one head; their own audit rows
  // all come after it, as a single receipt's does).
  const heads = batch?.heads ?? new Map<string, AuditHead | null>();
  const signer = currentSigner();
  const receipts: Record<string, unknown>[] = [];
  const completions: Record<string, unknown>[] = [];
  const events: EmitInput[] = [];
  const notices: ControlEvent[] = [];
  for (const [barrierId, facts] of all) {
    const previous = facts.receipts.at(-1) ?? null;
    const version = (previous?.version ?? 0) + 1;
    if (!heads.has(facts.teamId)) heads.set(facts.teamId, await recordAuditCheckpointTx(tx, facts.teamId, "receipt"));
    const auditHead = heads.get(facts.teamId) ?? null;
    const { body, canonical, digest, decision, evidence } = buildReceipt(facts, {
      version,
      previousDigest: previous?.digest ?? null,
      verifiedAt,
      auditHead,
    });
    // Signed at issue time with the deployment key: the in-toto subject is the receipt digest, the
    // predicate the body as issued (digest included), so the envelope alone can be verified offline.
    const envelope = signStatement(
      statementFor(STOP_RECEIPT_PREDICATE, { name: `stop-receipt/${barrierId}/v${version}`, sha256: digest }, body),
      signer,
    );
    receipts.push({
      id: newId("rcpt"),
      barrier_id: barrierId,
      version,
      canonical,
      body,
      decision,
      verified_at: verifiedAt.toISOString(),
      digest,
      envelope,
      key_id: signer.keyId,
    });
    completions.push({
      id: barrierId,
      decision,
      completed_at: verifiedAt.toISOString(),
      late: evidence.counts.lateRequestsDenied,
      last_settled_at: evidence.lastSettledAt?.toISOString() ?? null,
      quiesced_at: evidence.quiescedAt?.toISOString() ?? null,
    });
    if (version === 1) {
      events.push({
        teamId: facts.teamId,
        type: "barrier.complete",
        runId: facts.barrier.runId,
        subject: barrierId,
        data: { barrier_id: barrierId, decision },
      });
    }
    events.push({
      teamId: facts.teamId,
      type: "receipt.issued",
      runId: facts.barrier.runId,
      subject: barrierId,
      data: { barrier_id: barrierId, version, decision, digest, previous_digest: previous?.digest ?? null, key_id: signer.keyId },
    });
    notices.push({ kind: "receipt", teamId: facts.teamId, rootRunId: facts.rootRunId, barrierId });
    audits.push({ teamId: facts.teamId, actor, action: "barrier.receipt", target: barrierId, after: { version, decision, digest } });
    out.set(barrierId, { version, decision, digest });
  }
  // The rows go through JSON (jsonb_to_recordset): one parameter whatever the batch size, and each value
  // keeps its type (the body and envelope as JSON, times as ISO text with their milliseconds).
  await tx.$executeRawUnsafe(
    `INSERT INTO stop_receipts (id, barrier_id, version, canonical, body, decision, verified_at, digest, envelope, key_id)
     SELECT r.id, r.barrier_id, r.version, r.canonical, r.body, r.decision::"ReceiptDecision", r.verified_at, r.digest, r.envelope, r.key_id
       FROM jsonb_to_recordset($1::jsonb) AS r(id text, barrier_id text, version int, canonical text, body jsonb, decision text,
            verified_at timestamptz, digest text, envelope jsonb, key_id text)`,
    JSON.stringify(receipts),
  );
  await tx.$executeRawUnsafe(
    `UPDATE barriers b SET phase = 'complete', decision = c.decision::"ReceiptDecision", completed_at = c.completed_at,
            late_requests_denied = c.late, last_settled_at = c.last_settled_at, quiesced_at = c.quiesced_at,
            claimed_by = NULL, claim_expires_at = NULL
       FROM jsonb_to_recordset($1::jsonb) AS c(id text, decision text, completed_at timestamptz, late int, last_settled_at timestamptz,
            quiesced_at timestamptz)
      WHERE b.id = c.id`,
    JSON.stringify(completions),
  );
  await emitEventsTx(tx, events);
  await notifyControlMany(tx, notices);
  // Last: the append takes the team's audit lock, held until this transaction commits; every statement
  // after it would be one more that every other writer of the team's audit chain waits for (a fleet stop
  // issues thousands of receipts and starts thousands of barriers, all on one chain). A batch appends
  // all its receipts' rows at its end, under one acquisition (flushReceiptBatchTx).
  if (batch) batch.audit.push(...audits);
  else for (const a of audits) await appendAudit(tx, a);
  return out;
}

/** Receipts issued together in one transaction (the barrier engine's completion: lib/modules/stop/engine/complete.ts). */
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
 * Locks many barrier rows in one statement, oldest first (requested_at, id: the order every locker of
 * several barrier rows takes them in, coveringBarriersTx's), so two lockers never wait on each other in a cycle.
 */
export async function lockBarriersTx(tx: Tx, barrierIds: string[]): Promise<void> {
  if (barrierIds.length === 0) return;
  await tx.$queryRawUnsafe(`SELECT id FROM barriers WHERE id = ANY ($1::text[]) ORDER BY requested_at, id FOR UPDATE`, barrierIds);
}

/**
 * The environment's reconciliation (docs/design/environment-evidence.md): a supervised run the model calls
 * unknown as of `at` (its supervisor did not report within the quiet period, or could not empty its
 * container) is marked unknown since then, with the default owner of reconciliations, once. It is
 * answered by the supervisor's evidence (a report, or `quiesce exec --reattach`): the model reads only
 * that; the mark keeps who owns the question. Returns the audit rows of what it wrote (appended last, with
 * the receipts' own).
 */
async function openEnvironmentUnknownsTx(tx: Tx, all: Map<string, BarrierFacts>, at: Date, actor: string): Promise<AuditInput[]> {
  const open = new Map<string, { teamId: string; why: string }>();
  for (const facts of all.values()) {
    const env = deriveEvidence({ ...facts, now: at }).environment;
    for (const u of env.unknownRuns) {
      const run = facts.runs.find((r) => r.id === u.runId);
      if (run?.environment && !run.environment.unknownSince) open.set(u.runId, { teamId: facts.teamId, why: u.why });
    }
  }
  if (open.size === 0) return [];
  const rows = await tx.$queryRawUnsafe<
    { run_id: string; team_id: string; owner_user_id: string | null; owner_chosen_by: string | null }[]
  >(
    `UPDATE run_environments e SET unknown_since = $2, unknown_cause = u.why, owner_user_id = o.user_id, owner_chosen_by = o.chosen_by
       FROM jsonb_to_recordset($1::jsonb) AS u(run_id text, team_id text, why text)
       CROSS JOIN LATERAL quiesce_default_owner(u.team_id, u.run_id) o
      WHERE e.run_id = u.run_id AND e.unknown_since IS NULL
      RETURNING e.run_id, e.team_id, e.owner_user_id, e.owner_chosen_by`,
    JSON.stringify([...open].map(([runId, v]) => ({ run_id: runId, team_id: v.teamId, why: v.why }))),
    at,
  );
  return rows.map((r) => ({
    teamId: r.team_id,
    actor,
    action: "environment.unknown",
    target: r.run_id,
    after: { why: open.get(r.run_id)?.why ?? null, owner_user_id: r.owner_user_id, chosen_by: r.owner_chosen_by },
  }));
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
