// quiet → complete (docs/architecture.md#the-cancellation-barrier): the quiet period over, the receipt is
// issued under the barrier row lock, exactly once per quiet period.
import "server-only";
import { prisma, type Tx } from "../../../platform/db/prisma";
import type { Principal } from "../../../platform/auth/principal";
import { flushReceiptBatchTx, issueReceiptsTx, lockBarriersTx, newReceiptBatch, type ReceiptBatch } from "../internal/receipts";
import { IN_FLIGHT_SQL, PENDING_OWN_SQL, SUBTREE_SQL, system } from "./shared";

export type CompleteOutcome = { version: number; decision: string } | "waiting" | "pending" | "lost";

/**
 * Quiet period over → the receipt, for all of `barrierIds` in one transaction: every receipt's audit row
 * appended at the end, together, under one turn of the team's audit lock. The outcome of each, in the order given.
 */
export async function completeBarriers(p: Principal, barrierIds: string[], workerId: string): Promise<Map<string, CompleteOutcome>> {
  system(p);
  return prisma().$transaction(
    async (tx) => {
      const batch = newReceiptBatch();
      const out = await completeTx(tx, barrierIds, workerId, batch);
      await flushReceiptBatchTx(tx, batch);
      return out;
    },
    { timeout: 120_000 },
  );
}

/**
 * Set-based (docs/fleet-stop.md#at-scale): the rows locked in one statement (oldest first), the
 * conditions read in one — not quiet or not ours → "lost"; the period not
 * over → "waiting"; anything under the run in flight again → back to settling, "pending" — and the due
 * receipts issued together (issueReceiptsTx), their audit rows into `batch`.
 */
async function completeTx(tx: Tx, barrierIds: string[], workerId: string, batch: ReceiptBatch): Promise<Map<string, CompleteOutcome>> {
  await lockBarriersTx(tx, barrierIds);
  const rows = await tx.$queryRawUnsafe<
    { id: string; phase: string; claimed_by: string | null; quiet_until: Date | null; pending_own: number; in_flight: number }[]
  >(
    `SELECT b.id, b.phase::text AS phase, b.claimed_by, b.quiet_until, ${PENDING_OWN_SQL} AS pending_own, ${IN_FLIGHT_SQL} AS in_flight
       FROM barriers b JOIN runs r ON r.id = b.run_id ${SUBTREE_SQL}
      WHERE b.id = ANY ($1::text[])`,
    barrierIds,
  );
  const byId = new Map(rows.map((r) => [r.id, r]));
  const nowMs = Date.now();
  const out = new Map<string, CompleteOutcome>();
  const due: string[] = [];
  const back: string[] = [];
  for (const id of barrierIds) {
    const b = byId.get(id);
    if (!b) throw new Error(`barrier not found: ${id}`);
    if (b.phase !== "quiet" || b.claimed_by !== workerId) out.set(id, "lost");
    else if (b.quiet_until && b.quiet_until.getTime() > nowMs) out.set(id, "waiting");
    else if (b.pending_own > 0 || b.in_flight > 0) {
      back.push(id);
      out.set(id, "pending");
    } else due.push(id);
  }
  if (back.length > 0) await tx.$executeRawUnsafe(`UPDATE barriers SET phase = 'settling' WHERE id = ANY ($1::text[])`, back);
  const issued = await issueReceiptsTx(tx, due, new Date(), "system:barrier-engine", batch);
  for (const [id, r] of issued) out.set(id, r);
  // In the order asked for.
  return new Map(barrierIds.map((id) => [id, out.get(id)!]));
}
