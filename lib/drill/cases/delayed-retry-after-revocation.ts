// Seed 001: "A retry timer is queued authority in another form. [...] Otherwise the system can look
// quiet for five minutes and wake up under stale authority." A job fails; its retry is registered
// under the original epoch and armed on a timer inside the worker, where no barrier can reach it. The
// run is killed; the timer fires anyway: its admission is denied stale_epoch.
import { answered, barrierView, check, dbCheck, drillCase, label, links, newRun, registerWork, waitForReceipt } from "../support";

const RETRY_DELAY_MS = 4000;

export const delayedRetryFiresAfterRevocation = drillCase("delayed_retry_fires_after_revocation", "001", "deny_stale_epoch", {
  summary:
    "a retry scheduled before the kill under epoch N fires from a worker's own timer after it: admission denies stale_epoch, the retry never runs, the receipt counts it as cancelled",
  async run(ctx, { worker }) {
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
      check("the retry's admission was denied stale_epoch", answered(admit, "deny", "stale_epoch"), admit),
      check("the retry never ran", !out.handlerStarted && out.status === "discarded", out),
      check("the barrier cancelled the scheduled retry", (view.counts.retriesCancelled ?? 0) >= 1, view.counts),
      check("the receipt counts it under scheduled_retries_cancelled", (receipt.work?.scheduled_retries_cancelled ?? 0) >= 1, receipt.work),
      ...(await dbCheck(
        ctx,
        (db) => db.operation(retry.operationId),
        "db: the retry is kept as cancelled_not_started (stale_epoch)",
        (op) => op?.state === "cancelled_not_started" && op.stateReason === "stale_epoch",
      )),
    ];
    return {
      observed: label(admit.decision, admit.reason),
      checks,
      evidence: links(ctx, { runId: run.runId, barrierId }),
      facts: { runId: run.runId, retryOperationId: retry.operationId, stampedEpoch: stamp.epoch, receiptDecision: receipt.decision },
    };
  },
});
