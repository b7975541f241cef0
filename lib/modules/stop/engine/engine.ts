// The barrier engine's driver (docs/architecture.md#the-cancellation-barrier): the claimed barriers taken
// phase by phase from their durable rows — together where they can be, one by one where a barrier has work
// of its own. Called by the worker loop with the claims held. The steps are in the files beside this one,
// one per phase (claim, revoke, settle, quiet, complete).
import "server-only";
import { settleOne, type SettleContext } from "./settle-one";
import { withSpan } from "../../../platform/telemetry/tracing";
import { forEachBounded, sleep } from "../../../platform/wait";
import { loadClaimedState, releaseClaims, renewClaims } from "./claim";
import { loadBarrierWork, type BarrierWork } from "./load";
import { cancelBarrierQueueJobs, enterSettling } from "./revoke";
import { enterQuiet } from "./quiet";
import { completeBarriers } from "./complete";
import type { Principal } from "../../../platform/auth/principal";
import { onBarrierReceipts } from "../stops";
import { cancelQueuedWork } from "../kill";

export interface EngineOptions {
  principal: Principal;
  workerId: string;
  claimMs: number;
  localSettleMs: number;
  /** How many settlements of one barrier are worked on at once. */
  concurrency: number;
  signal: AbortSignal;
  log: (line: string) => void;
  /** How often a barrier waiting for another barrier's settlement under its subtree looks again. */
  subtreePollMs?: number;
}

export type BarrierOutcome =
  { kind: "done"; version: number; decision: string } | { kind: "waiting"; until: Date | null } | { kind: "lost" } | { kind: "stopped" };

const step = <T>(name: string, barrierId: string, fn: () => Promise<T>) =>
  withSpan(`quiesce.barrier.${name}`, { "quiesce.barrier_id": barrierId }, fn);

/**
 * Drives the claimed barriers. Several claimed together (docs/fleet-stop.md#at-scale) take each phase
 * step together — queued work cancelled in one transaction, into settling in one statement, quiet in one
 * transaction, the receipts in one transaction with their audit rows appended together. A barrier with
 * work of its own (a settlement to talk to its provider about, a subtree still in flight, a step the
 * batch could not take) — and a barrier claimed alone — goes on by itself, still claimed (driveOne). A
 * batch whose transaction fails hands every barrier not yet decided to driveOne, which resumes from the rows.
 */
export async function processBarriers(
  barrierIds: string[],
  o: EngineOptions,
  onOutcome?: (barrierId: string, outcome: BarrierOutcome) => void,
): Promise<void> {
  const alone = barrierIds.length === 1 ? [...barrierIds] : await stepTogether(barrierIds, o, onOutcome);
  await forEachBounded([...new Set(alone)], o.concurrency, async (id) => {
    if (o.signal.aborted) return;
    try {
      // Driven first, reported after: `onOutcome?.(id, await …)` would skip the drive when no one listens.
      const outcome = await driveOne(id, o);
      onOutcome?.(id, outcome);
    } catch (err) {
      o.log(`${id}: ${(err as Error).message} (the claim expires; work resumes from the rows)`);
    }
  });
  if (o.signal.aborted) await releaseClaims(o.principal, barrierIds, o.workerId).catch(() => {});
}

/** The batch's steps for every barrier that needs nothing of its own; returns the ones that go on alone. */
async function stepTogether(
  barrierIds: string[],
  o: EngineOptions,
  onOutcome?: (barrierId: string, outcome: BarrierOutcome) => void,
): Promise<string[]> {
  const held = [...barrierIds];
  let renewing = false;
  const renew = setInterval(
    () => {
      // One renewal at a time; rows the step in progress holds locked are skipped (renewClaims).
      if (renewing) return;
      renewing = true;
      renewClaims(o.principal, held, o.workerId, o.claimMs)
        .catch(() => {
          /* the next renewal retries before the claims expire */
        })
        .finally(() => {
          renewing = false;
        });
    },
    Math.max(250, Math.floor(o.claimMs / 3)),
  );
  const alone: string[] = [];
  const decided = new Set<string>();
  const outcome = (id: string, out: BarrierOutcome) => {
    decided.add(id);
    onOutcome?.(id, out);
  };
  try {
    const state = await loadClaimedState(o.principal, held, o.workerId);
    // Barriers of one tree overlap (a child's barrier and its root's): those go one at a time.
    const roots = new Set<string>();
    const batch: typeof state = [];
    for (const b of state) {
      if (roots.has(b.rootRunId)) alone.push(b.id);
      else {
        roots.add(b.rootRunId);
        batch.push(b);
      }
    }
    const revoking = batch.filter((b) => b.phase === "revoking").map((b) => b.id);
    let settling = new Set(batch.filter((b) => b.phase === "settling").map((b) => b.id));
    if (revoking.length > 0 && !o.signal.aborted) {
      await step("dispatch_stopped", revoking[0]!, async () => {
        const moved = await revoke(revoking, o);
        settling = new Set([...settling, ...moved]);
        for (const id of revoking) if (!moved.includes(id)) alone.push(id);
      });
    }
    // Own settlements to settle: the provider conversation, one barrier at a time.
    const quietNow: string[] = [];
    for (const b of batch) {
      if (!settling.has(b.id)) continue;
      if (b.pending > 0) alone.push(b.id);
      else quietNow.push(b.id);
    }
    const toComplete = batch.filter((b) => b.phase === "quiet" && (!b.quietUntil || b.quietUntil.getTime() <= Date.now())).map((b) => b.id);
    const waiting = batch.filter((b) => b.phase === "quiet" && b.quietUntil && b.quietUntil.getTime() > Date.now());
    if (quietNow.length > 0 && !o.signal.aborted) {
      const q = await step("quiet", quietNow[0]!, () => enterQuiet(o.principal, quietNow, o.workerId));
      for (const [id, r] of q) {
        if (typeof r === "object") {
          if (r.quietUntil.getTime() <= Date.now()) toComplete.push(id);
          else waiting.push({ id, phase: "quiet", rootRunId: "", quietUntil: r.quietUntil, pending: 0 });
        } else if (r === "lost") outcome(id, { kind: "lost" });
        else alone.push(id); // pending / subtree: driveOne waits for it
      }
    }
    if (toComplete.length > 0 && !o.signal.aborted) {
      const done: string[] = [];
      const c = await step("complete", toComplete[0]!, () => completeBarriers(o.principal, toComplete, o.workerId));
      for (const [id, r] of c) {
        if (typeof r === "object") {
          o.log(`${id}: receipt v${r.version} ${r.decision}`);
          done.push(id);
          outcome(id, { kind: "done", version: r.version, decision: r.decision });
        } else if (r === "lost") outcome(id, { kind: "lost" });
        else if (r === "waiting") waiting.push({ id, phase: "quiet", rootRunId: "", quietUntil: null, pending: 0 });
        else alone.push(id);
      }
      // The fleet stops waiting on these barriers may now issue their fleet receipts.
      await onBarrierReceipts(o.principal, done).catch((err: unknown) => o.log(`fleet receipt check failed: ${String(err)}`));
    }
    // Give the claims of the waiting back: whichever engine is awake when the period ends issues them.
    await releaseClaims(
      o.principal,
      waiting.map((w) => w.id),
      o.workerId,
    );
    for (const w of waiting) outcome(w.id, { kind: "waiting", until: w.quietUntil });
  } catch (err) {
    // Nothing of the failed step committed: every barrier not yet decided resumes alone from its rows.
    o.log(`batch of ${barrierIds.length}: ${(err as Error).message}; going on one by one`);
    alone.splice(0, alone.length, ...held.filter((id) => !decided.has(id)));
  } finally {
    clearInterval(renew);
  }
  return alone;
}

/**
 * The revoking step: queued work cancelled in the database first (the kill's second step; a no-op where
 * it ran) — it throws on failure, and the barriers resume from the rows once their claims expire — then
 * the jobs of real queues (best effort), then into settling. Returns the barriers moved.
 */
async function revoke(barrierIds: string[], o: EngineOptions): Promise<string[]> {
  await cancelQueuedWork(o.principal, barrierIds);
  await cancelBarrierQueueJobs(o.principal, barrierIds).catch((e: unknown) =>
    o.log(`queue cancel failed (will not block the barrier): ${(e as Error).message}`),
  );
  return enterSettling(o.principal, barrierIds, o.workerId);
}

/**
 * One barrier, driven phase by phase from its durable row, with its claim held: the claim is renewed
 * while work goes on, and a lost claim aborts the work (the new holder continues from the rows; every
 * write here is conditional, so nothing happens twice).
 */
async function driveOne(barrierId: string, o: EngineOptions): Promise<BarrierOutcome> {
  const lost = new AbortController();
  const signal = AbortSignal.any([o.signal, lost.signal]);
  const renew = setInterval(
    () => {
      renewClaims(o.principal, [barrierId], o.workerId, o.claimMs)
        .then((held) => {
          if (!held.includes(barrierId)) lost.abort();
        })
        .catch(() => {
          /* a transient error: the next renewal retries before the claim expires */
        });
    },
    Math.max(250, Math.floor(o.claimMs / 3)),
  );
  try {
    // The work is read once and again only when something else may have changed it (a wait on the
    // subtree, a settlement found pending): each step below is conditional on the barrier's row, so a
    // step taken on a stale read is refused there ("lost"), never done twice. A fleet stop runs
    // thousands of barriers through here; each skipped read is three statements per barrier.
    let work: BarrierWork | null = null;
    for (let round = 0; round < 1000; round++) {
      if (signal.aborted) break;
      work ??= await loadBarrierWork(o.principal, barrierId);
      if (!work) return { kind: "lost" };
      if (work.phase === "revoking") {
        if ((await step("dispatch_stopped", barrierId, () => revoke([barrierId], o))).length === 0) return { kind: "lost" };
        o.log(`${barrierId}: settling ${work.settlements.length} in-flight operation(s)`);
        work = { ...work, phase: "settling" };
        continue;
      }
      if (work.phase === "settling") {
        const ctx: SettleContext = {
          principal: o.principal,
          barrierId,
          teamId: work.teamId,
          requestedAt: work.requestedAt,
          localSettleMs: o.localSettleMs,
          signal,
          log: (l) => o.log(`${barrierId}: ${l}`),
        };
        const providers = work.providers;
        const pending = work.settlements.filter((s) => s.settledState === null);
        await step("settling", barrierId, () =>
          forEachBounded(pending, o.concurrency, (s) =>
            withSpan(
              "quiesce.settlement",
              { "quiesce.barrier_id": barrierId, "quiesce.operation_id": s.operationId, "quiesce.provider": s.providerName ?? "" },
              () => settleOne(ctx, s, s.providerName ? providers[s.providerName] : undefined),
            ),
          ),
        );
        if (signal.aborted) break;
        const q = (await step("quiet", barrierId, () => enterQuiet(o.principal, [barrierId], o.workerId))).get(barrierId)!;
        if (q === "lost") return { kind: "lost" };
        if (q === "subtree") {
          // Another barrier of the tree is still settling an operation under this one: the completion
          // rule covers the whole subtree, so wait for it (its settlement notifies; poll meanwhile).
          await sleep(o.subtreePollMs ?? 250, undefined, signal);
          work = null;
          continue;
        }
        if (q === "pending") {
          work = null; // a settlement is still open: read them again
          continue;
        }
        o.log(`${barrierId}: quiet until ${q.quietUntil.toISOString()}`);
        work = { ...work, phase: "quiet", quietUntil: q.quietUntil };
        continue;
      }
      if (work.phase === "quiet") {
        const r = (await step("complete", barrierId, () => completeBarriers(o.principal, [barrierId], o.workerId))).get(barrierId)!;
        if (r === "lost") return { kind: "lost" };
        if (r === "pending") {
          work = null; // back to settling: something under the run is in flight again
          continue;
        }
        if (r === "waiting") {
          // Give the claim back: whichever engine is awake when the period ends issues the receipt.
          await releaseClaims(o.principal, [barrierId], o.workerId);
          return { kind: "waiting", until: work.quietUntil };
        }
        o.log(`${barrierId}: receipt v${r.version} ${r.decision}`);
        // A fleet stop waiting on this barrier may now issue its fleet receipt (docs/fleet-stop.md).
        await onBarrierReceipts(o.principal, [barrierId]).catch((err: unknown) =>
          o.log(`${barrierId}: fleet receipt check failed: ${String(err)}`),
        );
        return { kind: "done", version: r.version, decision: r.decision };
      }
      return { kind: "lost" }; // complete: nothing to do
    }
    return lost.signal.aborted ? { kind: "lost" } : { kind: "stopped" };
  } finally {
    clearInterval(renew);
  }
}
