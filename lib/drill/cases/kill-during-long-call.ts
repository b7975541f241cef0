// Seed 004: "Kill during a long call. Confirm the system reports 'aborted with unknown outcome'. A
// report of 'did not execute' is a claim it has no evidence for."
import { barrierView, check, dbCheck, drillCase, links, newRun, settlementOf, startLongJob, waitForReceipt } from "../support";

export const killDuringLongCall = drillCase("kill_during_long_call", "004", "aborted_unknown_outcome", {
  summary:
    "a long call is running when the run is killed: its abort token fires, the worker reports aborted_unknown, and the barrier settles it unknown — never 'did not execute'",
  async run(ctx, { worker }) {
    const run = await newRun(ctx, { title: "deployment preview" });
    const { stamp, handle: h, started } = await startLongJob(ctx, worker, run, "long-call", "deployment.reserve_preview");
    const { barrierId } = await ctx.operator.kill(run.runId, "drill: kill during a long call");
    const out = await h.outcome;
    const receipt = await waitForReceipt(ctx, ctx.operator, barrierId);
    const view = await barrierView(ctx.operator, barrierId);
    const s = settlementOf(view, stamp.operationId);
    const inFlight = (receipt.in_flight as { operation_id: string; settled_state: string }[] | undefined)?.find(
      (x) => x.operation_id === stamp.operationId,
    );
    const checks = [
      check("the call was running when the kill came", started && s?.stateAtBarrier === "running", {
        started,
        stateAtBarrier: s?.stateAtBarrier,
      }),
      check("the worker's abort token fired: aborted_unknown (killed)", out.status === "aborted_unknown" && out.reason === "killed", out),
      check(
        "the barrier did not call it cancelled",
        s?.settledState !== "cancelled_without_effect" && s?.settledState === "unknown",
        s?.settledState,
      ),
      check(
        "the receipt lists it as unknown and the stop as incomplete",
        inFlight?.settled_state === "unknown" && receipt.decision === "stop_incomplete",
        { inFlight, decision: receipt.decision },
      ),
      check(
        "the worker's acknowledgment reached the ladder (observed by target)",
        view.ladder.observed_by_target?.status === "done",
        view.ladder.observed_by_target,
      ),
      ...(await dbCheck(
        ctx,
        (db) => db.operation(stamp.operationId),
        "db: the operation is not recorded as 'did not execute'",
        (op) => !!op && op.state !== "cancelled_not_started",
      )),
    ];
    const unknown = out.status === "aborted_unknown" && s?.settledState === "unknown";
    return {
      observed: unknown ? "aborted_unknown_outcome" : `${out.status}/${s?.settledState ?? "pending"}`,
      checks,
      evidence: links(ctx, { runId: run.runId, barrierId }),
      facts: { runId: run.runId, worker: worker.label, outcome: out, settlement: s },
    };
  },
});
