// Read model for the receipt page (docs/architecture.md#the-stop-receipt): one version of a barrier's stop receipt, every
// version that exists, and a server-side recomputation of the digest so the page can say "verified"
// only when the stored body, the stored canonical text and the stored digest all agree.
import "server-only";
import { prisma } from "../../db/prisma";
import { notFound } from "../../errors";
import { digestOf, sha256Hex } from "../../control/canonical";
import { authorize } from "../authorize";
import type { Principal } from "../principal";
import { consoleTeam } from "./team";

export interface ReceiptVersionRef { version: number; decision: string; digest: string; createdAt: string }

export interface ConsoleReceipt {
  barrierId: string; runId: string; version: number; latestVersion: number;
  decision: "stopped_and_quiet" | "stop_incomplete"; verifiedAt: string; createdAt: string;
  digest: string; canonical: string; body: Record<string, unknown>;
  check: { verified: boolean; recomputed: string; detail: string };
  versions: ReceiptVersionRef[];
}

/** Recomputes the digest from the body and from the canonical text; both must match the stored one. */
export function checkDigest(r: { body: unknown; canonical: string; digest: string }): ConsoleReceipt["check"] {
  const body = (r.body ?? {}) as Record<string, unknown>;
  const { canonical, digest } = digestOf(body);
  const fromText = sha256Hex(r.canonical);
  if (digest !== r.digest) return { verified: false, recomputed: digest, detail: "the digest recomputed from the receipt body does not match the recorded digest" };
  if (fromText !== r.digest || canonical !== r.canonical) return { verified: false, recomputed: fromText, detail: "the stored canonical text does not match the receipt body" };
  if (typeof body.digest === "string" && body.digest !== r.digest) return { verified: false, recomputed: digest, detail: "the body names a different digest" };
  return { verified: true, recomputed: digest, detail: "sha256 of the canonical body matches the recorded digest" };
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
  const barrier = await receiptBarrier(p, barrierId);
  const versions = await prisma().stopReceipt.findMany({
    where: { barrierId }, orderBy: { version: "desc" },
    select: { version: true, decision: true, digest: true, createdAt: true },
  });
  if (versions.length === 0) {
    if (version !== undefined) throw notFound("receipt version");
    return null;
  }
  const latest = versions[0]!.version;
  const r = await prisma().stopReceipt.findUnique({ where: { barrierId_version: { barrierId, version: version ?? latest } } });
  if (!r) throw notFound("receipt version");
  return {
    barrierId, runId: barrier.runId, version: r.version, latestVersion: latest, decision: r.decision,
    verifiedAt: r.verifiedAt.toISOString(), createdAt: r.createdAt.toISOString(), digest: r.digest, canonical: r.canonical,
    body: (r.body ?? {}) as Record<string, unknown>,
    check: checkDigest({ body: r.body, canonical: r.canonical, digest: r.digest }),
    versions: versions.map((v) => ({ version: v.version, decision: v.decision, digest: v.digest, createdAt: v.createdAt.toISOString() })),
  };
}
