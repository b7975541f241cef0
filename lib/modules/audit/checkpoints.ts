// The head of an audit chain, read and recorded as a checkpoint inside the caller's transaction
// (stop receipts, verification, periodic checkpoints). Transaction-level: no authorization here;
// the public callers in lib/modules authorize first (lib/modules/audit/audit-verify.ts).
import "server-only";
import type { Tx } from "../../platform/db/prisma";

export interface AuditHead {
  eventId: string;
  hash: string;
  count: number;
}

/** The head of a team's chain (null team: the global chain of sign-ins and user changes). */
export async function auditHeadTx(tx: Pick<Tx, "auditEvent">, teamId: string | null): Promise<AuditHead | null> {
  // In sequence, not Promise.all: both run on the transaction's one connection, and a second query handed
  // to pg while the first runs is deprecated ("client.query() when the client is already executing").
  const last = await tx.auditEvent.findFirst({ where: { teamId }, orderBy: { id: "desc" }, select: { id: true, hash: true } });
  const count = await tx.auditEvent.count({ where: { teamId } });
  return last ? { eventId: last.id.toString(), hash: last.hash, count } : null;
}

export async function recordAuditCheckpointTx(
  tx: Tx,
  teamId: string | null,
  source: "verify" | "receipt" | "periodic",
): Promise<AuditHead | null> {
  const head = await auditHeadTx(tx, teamId);
  if (!head) return null;
  await tx.auditCheckpoint.create({
    data: { teamId, lastEventId: BigInt(head.eventId), headHash: head.hash, eventCount: head.count, source },
  });
  return head;
}
