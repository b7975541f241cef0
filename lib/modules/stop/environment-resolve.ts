// A person closes an unknown environment (docs/design/environment-evidence.md): a supervised run whose
// supervisor never reported, or could not empty its container, is owned by a named person; the owner (or a
// manager/admin) who checked the machine records that the tree is gone, with a note. Like resolving an
// unknown call: the receipt names who, when and the note, and says it was a person's check, not the
// supervisor's proof. Every covering barrier's receipt gets its next version.
import "server-only";
import { prisma } from "../../platform/db/prisma";
import { forbidden, notFound, QuiesceError } from "../../platform/errors";
import { authorize, assertTeam } from "../../platform/auth/authorize";
import { actorOf, type Principal } from "../../platform/auth/principal";
import { appendAudit } from "../audit/audit";
import { mayResolveReconciliation } from "../../control/reconciliation";
import type { Role } from "../../control/types";
import { lockBarrierTx, reissueCoveringTx } from "./internal/receipts";
import { coveringBarriersTx } from "./internal/evidence";

export async function resolveEnvironment(
  p: Principal,
  runId: string,
  input: { evidence: string },
): Promise<{ runId: string; resolvedAt: string; resolvedBy: string; receiptVersions: { barrierId: string; version: number }[] }> {
  authorize(p, "reconciliation.resolve");
  const env = await prisma().runEnvironment.findUnique({ where: { runId } });
  if (!env) {
    const run = await prisma().run.findUnique({ where: { id: runId }, select: { teamId: true } });
    if (!run) throw notFound("run");
    assertTeam(p, run.teamId, "run");
    throw new QuiesceError("conflict", "the run has no supervisor: nothing is claimed about its processes, so there is nothing to resolve");
  }
  assertTeam(p, env.teamId, "run");
  const role: Role | null = p.type === "system" ? null : p.role;
  const userId = p.type === "system" ? null : p.userId;
  if (p.type !== "system" && !mayResolveReconciliation({ role, userId }, env.ownerUserId))
    throw forbidden("only the owner of this environment or a manager/admin may resolve it");
  const actor = actorOf(p);
  return prisma().$transaction(async (tx) => {
    for (const b of await coveringBarriersTx(tx, runId)) await lockBarrierTx(tx, b.id);
    const at = new Date();
    const n = await tx.runEnvironment.updateMany({
      where: { runId, unknownSince: { not: null }, resolvedAt: null },
      data: { resolvedAt: at, resolvedBy: actor, resolutionEvidence: input.evidence },
    });
    if (n.count === 0) throw new QuiesceError("conflict", "the environment is not unknown (or already resolved)");
    await appendAudit(tx, {
      teamId: env.teamId,
      actor,
      action: "environment.resolved",
      target: runId,
      after: { resolution: "verified_empty", evidence: input.evidence },
    });
    const receiptVersions = await reissueCoveringTx(tx, runId, actor);
    return { runId, resolvedAt: at.toISOString(), resolvedBy: actor, receiptVersions };
  });
}
