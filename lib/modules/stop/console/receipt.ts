// Read model for the receipt page: one version of a barrier's stop receipt, every version that exists,
// and the server-side check by the one verifier (lib/control/evidence/receipt), so the page says
// "verified" only when the stored body, the stored canonical text and the stored digest all agree.
// Reads through lib/modules/barriers, the same function the API serves, so the bytes are the same.
import "server-only";
import { prisma } from "../../../platform/db/prisma";
import { notFound } from "../../../platform/errors";
import { authorize } from "../../../platform/auth/authorize";
import type { Principal } from "../../../platform/auth/principal";
import { findReceipt } from "../barriers";
import { consoleTeam } from "../../../platform/auth/console-team";

export interface ReceiptVersionRef {
  version: number;
  decision: string;
  digest: string;
  createdAt: string;
}

export interface ConsoleReceipt {
  barrierId: string;
  runId: string;
  version: number;
  latestVersion: number;
  decision: "stopped_and_quiet" | "stop_incomplete";
  verifiedAt: string;
  createdAt: string;
  digest: string;
  canonical: string;
  body: Record<string, unknown>;
  check: { verified: boolean; recomputed: string; detail: string };
  versions: ReceiptVersionRef[];
  envelope: unknown;
  signature: { valid: boolean; keyId: string | null; detail: string };
}

/** A barrier the reader may see (404 otherwise), whether or not a receipt exists yet. */
export async function receiptBarrier(p: Principal, barrierId: string): Promise<{ id: string; runId: string; phase: string }> {
  authorize(p, "run.read");
  const b = await prisma().barrier.findUnique({ where: { id: barrierId }, select: { id: true, runId: true, teamId: true, phase: true } });
  if (!b || b.teamId !== consoleTeam(p)) throw notFound("receipt");
  return { id: b.id, runId: b.runId, phase: b.phase };
}

/** null while no receipt has been issued; 404 for another team's barrier or a version that does not exist. */
export async function getConsoleReceipt(p: Principal, barrierId: string, version?: number): Promise<ConsoleReceipt | null> {
  await receiptBarrier(p, barrierId);
  const r = await findReceipt(p, barrierId, version);
  if (!r) {
    if (version !== undefined) throw notFound("receipt version");
    return null;
  }
  return {
    barrierId,
    runId: r.runId,
    version: r.version,
    latestVersion: r.latestVersion,
    decision: r.decision,
    verifiedAt: r.verifiedAt,
    createdAt: r.createdAt,
    digest: r.digest,
    canonical: r.canonical,
    body: r.body,
    check: { verified: r.check.ok, recomputed: r.check.recomputed, detail: r.check.detail },
    versions: [...r.versions].reverse(),
    envelope: r.envelope,
    signature: r.signature,
  };
}
