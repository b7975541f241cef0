// One barrier, driven phase by phase from its durable row (docs/architecture.md#the-cancellation-barrier). Called by the worker loop
// with a claim held; the claim is renewed while work goes on, and a lost claim aborts the work (the
// new holder continues from the rows; every write here is conditional, so nothing happens twice).
import { cancelBarrierQueueJobs } from "./queue-cancel";
import { settleOne, type SettleContext } from "./settle-one";
import { withSpan } from "../integrations/tracing";
import {
  completeBarrier,
  enterQuiet,
  enterSettling,
  loadBarrierWork,
  releaseClaim,
  renewClaim,
  type BarrierWork,
} from "../dal/barrier-engine";
import type { Principal } from "../dal/principal";
import { onBarrierReceipt } from "../dal/stops";
import { cancelQueuedWorkOfBarrier } from "../dal/kill";

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

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    if (signal.aborted) return resolve();
    const t = setTimeout(() => {
      signal.removeEventListener("abort", done);
      resolve();
    }, ms);
    const done = () => {
      clearTimeout(t);
      resolve();
    };
    signal.addEventListener("abort", done, { once: true });
  });

export type BarrierOutcome =
  { kind: "done"; version: number; decision: string } | { kind: "waiting"; until: Date | null } | { kind: "lost" } | { kind: "stopped" };

async function pool<T>(items: T[], limit: number, fn: (x: T) => Promise<void>): Promise<void> {
  let next = 0;
  const workers = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) await fn(items[next++]!);
  });
  await Promise.all(workers);
}

const step = <T>(name: string, barrierId: string, fn: () => Promise<T>) =>
  withSpan(`quiesce.barrier.${name}`, { "quiesce.barrier_id": barrierId }, fn);

export async function processBarrier(barrierId: string, o: EngineOptions): Promise<BarrierOutcome> {
  const lost = new AbortController();
  const signal = AbortSignal.any([o.signal, lost.signal]);
  const renew = setInterval(
    () => {
      renewClaim(o.principal, barrierId, o.workerId, o.claimMs)
        .then((ok) => {
          if (!ok) lost.abort();
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
        // Queued work cancelled in the database first (the kill's second step; a no-op when it ran): throws
        // on failure, and the barrier resumes from the rows once the claim expires.
        await cancelQueuedWorkOfBarrier(o.principal, barrierId);
        await cancelBarrierQueueJobs(o.principal, barrierId).catch((e) =>
          o.log(`queue cancel failed (will not block the barrier): ${(e as Error).message}`),
        );
        if (!(await step("dispatch_stopped", barrierId, () => enterSettling(o.principal, barrierId, o.workerId)))) return { kind: "lost" };
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
          pool(pending, o.concurrency, (s) =>
            withSpan(
              "quiesce.settlement",
              { "quiesce.barrier_id": barrierId, "quiesce.operation_id": s.operationId, "quiesce.provider": s.providerName ?? "" },
              () => settleOne(ctx, s, s.providerName ? providers[s.providerName] : undefined),
            ),
          ),
        );
        if (signal.aborted) break;
        const q = await step("quiet", barrierId, () => enterQuiet(o.principal, barrierId, o.workerId));
        if (q === "lost") return { kind: "lost" };
        if (q === "subtree") {
          // Another barrier of the tree is still settling an operation under this one: the completion
          // rule covers the whole subtree, so wait for it (its settlement notifies; poll meanwhile).
          await sleep(o.subtreePollMs ?? 250, signal);
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
        const r = await step("complete", barrierId, () => completeBarrier(o.principal, barrierId, o.workerId));
        if (r === "lost") return { kind: "lost" };
        if (r === "pending") {
          work = null; // back to settling: something under the run is in flight again
          continue;
        }
        if (r === "waiting") {
          // Give the claim back: whichever engine is awake when the period ends issues the receipt.
          await releaseClaim(o.principal, barrierId, o.workerId);
          return { kind: "waiting", until: work.quietUntil };
        }
        o.log(`${barrierId}: receipt v${r.version} ${r.decision}`);
        // A fleet stop waiting on this barrier may now issue its fleet receipt (docs/fleet-stop.md).
        await onBarrierReceipt(o.principal, barrierId).catch((err: unknown) =>
          o.log(`${barrierId}: fleet receipt check failed: ${String(err)}`),
        );
        return { kind: "done", version: r.version, decision: r.decision };
      }
      return { kind: "lost" }; // complete: nothing to do
    }
    return lost.signal.aborted ? { kind: "lost" } : { kind: "stopped" };
  } finally {
    clearInterval(renew);
    if (o.signal.aborted) await releaseClaim(o.principal, barrierId, o.workerId).catch(() => {});
  }
}
