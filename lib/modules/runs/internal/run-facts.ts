// Loads the facts the pure gate decision (lib/control/gate) needs — the run's ancestry and its lease
// chain — inside a caller's transaction, AFTER the caller took the tree lock. Used where the API must
// apply the gate's authority rules outside the gate's own SQL function (operation registration).
import "server-only";
import type { Tx } from "../../../platform/db/prisma";
import type { LeaseFacts, RunFacts } from "../../../control/gate";
import type { BreakerState, Lifecycle } from "../../../control/types";

export async function loadRunChain(tx: Tx, teamId: string, path: readonly string[]): Promise<(RunFacts | null)[]> {
  const rows = await tx.run.findMany({
    where: { id: { in: [...path] }, teamId },
    select: {
      id: true,
      lifecycle: true,
      breaker: true,
      breakerChangedAt: true,
      breakerProbeOpId: true,
      breakerHeld: true,
      epoch: true,
      finishedAt: true,
    },
  });
  const byId = new Map(rows.map((r) => [r.id, r]));
  return path.map((id) => {
    const r = byId.get(id);
    return r
      ? {
          runId: r.id,
          lifecycle: r.lifecycle as Lifecycle,
          breaker: r.breaker as BreakerState,
          breakerChangedAt: r.breakerChangedAt.getTime(),
          breakerProbeOpId: r.breakerProbeOpId,
          breakerHeld: r.breakerHeld,
          epoch: r.epoch,
          finishedAt: r.finishedAt?.getTime() ?? null,
        }
      : null;
  });
}

/** The lease chain root-first, or null when the lease is missing or not this team's. */
export async function loadLeaseChain(tx: Tx, teamId: string, leaseId: string): Promise<(LeaseFacts | null)[] | null> {
  const own = await tx.lease.findUnique({ where: { id: leaseId }, select: { teamId: true, path: true } });
  if (!own || own.teamId !== teamId) return null;
  const rows = await tx.lease.findMany({
    where: { id: { in: own.path }, teamId },
    select: { id: true, runId: true, validUntil: true, revokedAt: true },
  });
  const byId = new Map(rows.map((l) => [l.id, l]));
  return own.path.map((id) => {
    const l = byId.get(id);
    return l ? { leaseId: l.id, runId: l.runId, validUntil: l.validUntil.getTime(), revokedAt: l.revokedAt?.getTime() ?? null } : null;
  });
}

/** True when the run or any ancestor is killed (the kill marks the whole tree; ancestors checked too). */
export async function treeKilled(tx: Tx, path: readonly string[]): Promise<boolean> {
  const n = await tx.run.count({ where: { id: { in: [...path] }, lifecycle: "killed" } });
  return n > 0;
}

/** SHARED tree lock: serializes with kill / lifecycle writes (exclusive) but not with gate calls. */
export async function lockRunTreeShared(tx: Tx, rootRunId: string): Promise<void> {
  await tx.$executeRawUnsafe("SELECT pg_advisory_xact_lock_shared(hashtextextended($1, 0))", rootRunId);
}
