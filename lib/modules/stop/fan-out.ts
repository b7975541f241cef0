// A kill scope's fan-out (docs/fleet-stop.md#kill-the-fan-out-and-the-fleet-receipt): the barrier engine
// starts the barriers of the scope's pending target rows, QUIESCE_FLEET_BATCH_SIZE targets per kill
// transaction (killTargets), QUIESCE_FLEET_FANOUT_CONCURRENCY transactions at once, each target linked to
// its barrier in the kill's own transaction. A batch that fails is retried once if the database was only
// busy, else started target by target, so one refused target cannot fail the others.
import "server-only";
import { prisma } from "../../platform/db/prisma";
import { isDatabaseUnavailable, notFound } from "../../platform/errors";
import type { Principal } from "../../platform/auth/principal";
import { setting } from "../../platform/config";
import { forEachBounded } from "../../platform/wait";
import { killTargets, type KillTargetsOptions, type KillTargetsResult } from "./kill";

/** Batches of barriers started at once by one fan-out (each batch is one kill transaction). */
export const fanOutConcurrency = () => setting("QUIESCE_FLEET_FANOUT_CONCURRENCY");

export interface FanOutScope {
  id: string;
  teamId: string;
  reason: string;
  requestedBy: string;
}

/** Starts the scope's pending targets; returns how many barriers it started. */
export async function fanOut(p: Principal, scope: FanOutScope, signal?: AbortSignal): Promise<number> {
  const pending = await prisma().stopScopeTarget.findMany({
    where: { scopeId: scope.id, barrierId: null, error: null },
    select: { runId: true },
  });
  const size = setting("QUIESCE_FLEET_BATCH_SIZE");
  const batches: string[][] = [];
  for (let i = 0; i < pending.length; i += size) batches.push(pending.slice(i, i + size).map((t) => t.runId));
  let started = 0;
  await forEachBounded(batches, fanOutConcurrency(), async (runIds) => {
    // An engine stopping leaves the rest to the next wake of any engine (the targets are durable).
    if (signal?.aborted) return;
    let batch: KillTargetsResult | null = null;
    // One retry when the database was only busy; a batch that still fails (or is refused) is started
    // one target at a time, so one bad target cannot hold back or fail the others.
    for (let attempt = 0; attempt < 2 && !batch; attempt++) {
      try {
        batch = await killTargets(p, runIds, killOptions(scope));
      } catch (err) {
        if (!isDatabaseUnavailable(err)) break;
      }
    }
    if (batch) {
      started += batch.started.size;
      for (const runId of batch.notFound) await recordRefusal(scope, runId, notFound("run"));
      return;
    }
    for (const runId of runIds) {
      if (signal?.aborted) return;
      if (await startOne(p, scope, runId)) started++;
    }
  });
  return started;
}

/** A target's kill: on behalf of the person who asked for the stop, linked to its barrier in the kill's transaction. */
const killOptions = (scope: FanOutScope): KillTargetsOptions => ({
  reason: `fleet stop ${scope.id}: ${scope.reason}`.slice(0, 2000),
  onBehalfOf: scope.requestedBy,
  teamId: scope.teamId,
  scopeId: scope.id,
});

/** One target alone (the batch's fallback): true when it is linked to a barrier. */
async function startOne(p: Principal, scope: FanOutScope, runId: string): Promise<boolean> {
  try {
    const k = await killTargets(p, [runId], killOptions(scope));
    if (k.notFound.length > 0) throw notFound("run");
    return true;
  } catch (err) {
    // A saturated or failing-over database (a lock or statement timeout, no connection in time) is not
    // this target's failure: it stays pending and the next wake starts it (a kill that did commit is
    // answered with its barrier then). Only a refusal is recorded, making the fleet stop_incomplete.
    if (isDatabaseUnavailable(err)) return false;
    await recordRefusal(scope, runId, err);
    return false;
  }
}

async function recordRefusal(scope: FanOutScope, runId: string, err: unknown): Promise<void> {
  await prisma()
    .stopScopeTarget.update({
      where: { scopeId_runId: { scopeId: scope.id, runId } },
      data: { error: err instanceof Error ? err.message : String(err) },
    })
    .catch(() => {
      /* the database again: the target stays pending */
    });
}
