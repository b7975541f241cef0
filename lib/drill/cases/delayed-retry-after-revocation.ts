// Seed 001: "A retry timer is queued authority in another form. [...] Otherwise the system can look
// quiet for five minutes and wake up under stale authority." A job fails; its retry is registered
// under the original epoch and armed on a timer inside the worker, where no barrier can reach it. The
// run is killed; the timer fires anyway: its admission is denied stale_epoch.
import { barrierView, check, label, links, must, newRun, registerWork, waitForReceipt } from "../support";
import type { DrillCase } from "../types";

const RETRY_DELAY_MS = 4000;

export const delayedRetryFiresAfterRevocation: DrillCase = {
  name: "delayed_retry_fires_after_revocation",
  seed: "001",
  expected: "deny_stale_epoch",
  summary:
    "a retry scheduled before the kill under epoch N fires from a worker's own timer after it: admission denies stale_epoch, the retry never runs, the receipt counts it as cancelled",
  needs: ["agent"],
  async run(ctx) {
    const worker = must(ctx.worker, "a worker");
    const run = await newRun(ctx, { title: "database compatibility check" });
    const stamp = await registerWork(ctx, run, "compat-check", "db.compatibility_check");
    const first = await worker.run(stamp, { kind: "fail" }).outcome;
    const retry = await worker.scheduleRetry(stamp, "db.compatibility_check", RETRY_DELAY_MS, { kind: "quick" });
    const { barrierId } = await ctx.operator.kill(run.runId, "drill: stop before the retry fires");
    const admit = await retry.firstAdmit;
    const out = await retry.outcome;
    const receipt = await waitForReceipt(ctx, ctx.operator, barrierId);
    const view = await barrierView(ctx.operator, barrierId);
    const checks = [
      check("the first attempt failed (so a retry was scheduled)", first.status === "failed", first),
      check("the retry's admission was denied stale_epoch", admit.decision === "deny" && admit.reason === "stale_epoch", admit),
      check("the retry never ran", !out.handlerStarted && out.status === "discarded", out),
      check("the barrier cancelled the scheduled retry", (view.counts.retriesCancelled ?? 0) >= 1, view.counts),
      check("the receipt counts it under scheduled_retries_cancelled", (receipt.work?.scheduled_retries_cancelled ?? 0) >= 1, receipt.work),
    ];
    if (ctx.db) {
      const op = await ctx.db.operation(retry.operationId);
      checks.push(
        check(
          "db: the retry is kept as cancelled_not_started (stale_epoch)",
          op?.state === "cancelled_not_started" && op.stateReason === "stale_epoch",
          op,
        ),
      );
    }
    return {
      observed: label(admit.decision, admit.reason),
      checks,
      evidence: links(ctx, { runId: run.runId, barrierId }),
      facts: { runId: run.runId, retryOperationId: retry.operationId, stampedEpoch: stamp.epoch, receiptDecision: receipt.decision },
    };
  },
};
