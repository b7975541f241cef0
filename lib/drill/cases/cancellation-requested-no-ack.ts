// Seed 000: "Cancellation requested, no acknowledgment — Represent the outcome as unknown or pending,
// not canceled." A plain tool call runs inside the agent; the agent never acknowledges the stop and
// never reports. The ladder must say pending (then uncertain), the receipt must not say stopped.
import { barrierView, check, drillCase, gatedCall, links, settlementOf, waitForReceipt } from "../support";

export const cancellationRequestedNoAck = drillCase("cancellation_requested_no_ack", "000", "pending_not_cancelled", {
  summary:
    "the stop is requested while a call runs inside an agent that never acknowledges: 'observed by target' reads pending, then uncertain; the call settles unknown and the receipt is stop_incomplete — never 'cancelled'",
  async run(ctx) {
    const { run, body, answer: allowed } = await gatedCall(ctx, "agent turn with a tool call", "silent-call", "shell.exec");
    const { barrierId } = await ctx.operator.kill(run.runId, "drill: stop requested, target silent");
    const early = await barrierView(ctx.operator, barrierId);
    const receipt = await waitForReceipt(ctx, ctx.operator, barrierId);
    const late = await barrierView(ctx.operator, barrierId);
    const s = settlementOf(late, body.operationId);
    const earlyRung = early.ladder.observed_by_target?.status;
    const lateRung = late.ladder.observed_by_target?.status;
    const checks = [
      check("the call was running at the stop", allowed.decision === "allow" && s?.stateAtBarrier === "running", {
        allowed,
        stateAtBarrier: s?.stateAtBarrier,
      }),
      check(
        "right after the request, 'observed by target' is pending (not done)",
        earlyRung === "pending" || earlyRung === "uncertain",
        early.ladder.observed_by_target,
      ),
      check("after the barrier, 'observed by target' is uncertain", lateRung === "uncertain", late.ladder.observed_by_target),
      check("the receipt records no acknowledgment", receipt.observed_by_target === "uncertain", receipt.observed_by_target),
      check("the call settled unknown, not cancelled", s?.settledState === "unknown", s?.settledState),
      check("the receipt is stop_incomplete", receipt.decision === "stop_incomplete", receipt.decision),
    ];
    const notCancelled =
      (earlyRung === "pending" || earlyRung === "uncertain") && lateRung === "uncertain" && receipt.decision !== "stopped_and_quiet";
    return {
      observed: notCancelled ? "pending_not_cancelled" : `${earlyRung}/${lateRung}/${receipt.decision}`,
      checks,
      evidence: links(ctx, { runId: run.runId, barrierId }),
      facts: { earlyRung: early.ladder.observed_by_target, lateRung: late.ladder.observed_by_target, settlement: s },
    };
  },
});
