// Read model for the receipt page: one version of a barrier's stop receipt, every version that exists,
// and the server-side check by the one verifier (lib/control/evidence/receipt), so the page says
// "verified" only when the stored body, the stored canonical text and the stored digest all agree.
// Reads through lib/modules/stop/barriers.ts, the same function the API and the CLI serve, so the bytes
// and the fields are the same.
import "server-only";
import { prisma } from "../../../platform/db/prisma";
import { notFound } from "../../../platform/errors";
import { authorize } from "../../../platform/auth/authorize";
import type { Principal } from "../../../platform/auth/principal";
import { findReceipt, type ReceiptRecord } from "../barriers";
import { consoleTeam } from "../../../platform/auth/console-team";

/** A barrier the reader may see (404 otherwise), whether or not a receipt exists yet. */
export async function receiptBarrier(p: Principal, barrierId: string): Promise<{ id: string; runId: string; phase: string }> {
  authorize(p, "run.read");
  const b = await prisma().barrier.findUnique({ where: { id: barrierId }, select: { id: true, runId: true, teamId: true, phase: true } });
  if (!b || b.teamId !== consoleTeam(p)) throw notFound("receipt");
  return { id: b.id, runId: b.runId, phase: b.phase };
}

/**
 * The receipt read the API and the CLI make (findReceipt), after the console's own team check. null while
 * no receipt has been issued; 404 for another team's barrier or a version that does not exist.
 */
export async function getConsoleReceipt(p: Principal, barrierId: string, version?: number): Promise<ReceiptRecord | null> {
  await receiptBarrier(p, barrierId);
  const r = await findReceipt(p, barrierId, version);
  if (!r && version !== undefined) throw notFound("receipt version");
  return r;
}
