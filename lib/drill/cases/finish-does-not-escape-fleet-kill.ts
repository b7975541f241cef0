// Finishing ends a run's authority; it is not a way out of a stop (docs/fleet-stop.md#run-completion).
// A run with a call in flight cannot be finished (409) — not by its holder without `abandon`, not at
// all by another key of the team (403) — and a fleet kill naming it covers it: a barrier, and a
// receipt that does not say stopped_and_quiet while the call's outcome is unknown.
import { check, drillCase, gatedCall, links, statusOf, waitForFleetReceipt } from "../support";

export const finishDoesNotEscapeFleetKill = drillCase("finish_does_not_escape_fleet_kill", "004", "stop_incomplete", {
  summary:
    "a run's call is in flight; finishing it is refused (409 for its holder, 403 for another key of the team), the gate keeps answering for it, and a fleet kill naming it starts its barrier: stop_incomplete with the outcome unknown",
  needs: ["stranger"],
  async run(ctx, { agent, stranger }) {
    const { run, body, answer: g } = await gatedCall(ctx, "agent that says it is done", "still-running", "deployment.apply");
    const byHolder = await statusOf(agent.finish(run.runId));
    const byStranger = await statusOf(stranger.finish(run.runId));
    const stop = (await ctx.operator.createStop({ action: "kill", filter: { runIds: [run.runId] }, reason: "drill: fleet kill" })) as {
      stopId: string;
      matched: number;
    };
    const done = await waitForFleetReceipt(ctx, stop.stopId);
    const after = await agent.gate({ ...body, operationId: `${body.operationId}.after`, tool: "x" });
    const checks = [
      check("the call was allowed before the stop", g.decision === "allow", g),
      check("the holder cannot finish a run with a call in flight (409)", byHolder === 409, byHolder),
      check("another key of the team cannot finish it at all (403)", byStranger === 403, byStranger),
      check("the fleet kill matched the run", stop.matched === 1, stop.matched),
      check("the fleet started a barrier for it", done.barriers.total === 1, done.barriers),
      check(
        "the fleet receipt is not stopped_and_quiet while the outcome is unknown",
        done.receipt!.decision === "stop_incomplete",
        done.receipt,
      ),
      check("the gate denies the run afterwards", after.decision === "deny", after),
    ];
    return {
      observed: done.receipt!.decision,
      checks,
      evidence: links(ctx, { runId: run.runId }),
      facts: { byHolder, byStranger, matched: stop.matched, barriers: done.barriers },
    };
  },
});
