// Seed 001: "provider_response: accepted is not the settled state" — for undoing as for cancelling. The
// provider accepts the compensation but keeps the effect; the item is failed, never rolled_back.
import { check, drillCase, killProviderCall, links, must } from "../support";

export const compensationAcceptedButNotDone = drillCase("compensation_accepted_but_not_done", "001", "failed", {
  summary:
    "the provider answers the compensation with accepted but its effect check still sees the effect: the recovery item is failed with the provider's answer kept, never rolled_back",
  needs: ["sim"],
  async run(ctx, { sim }) {
    const { run, job, barrierId } = await killProviderCall(ctx, "commit_during_cancel", "drill: compensation that does nothing", {
      compensation: "ignore",
    });
    const [item] = (await ctx.operator.listRecoveries({ barrierId, state: "all" })).recoveries;
    const r = await ctx.operator.startRecovery(must(item, "a recovery item for the completed effect").id);
    const simJob = await sim.client.getJob(job.jobId);
    const again = await ctx.operator.listRecoveries({ barrierId, state: "open" });
    const checks = [
      check("the provider accepted the compensation", r.compensationResponse === "accepted", r.compensationResponse),
      check("the provider still holds the effect", simJob.state === "committed" && simJob.compensateRequests === 1, simJob),
      check(
        "the item is failed, its check answered present",
        r.state === "failed" && r.verifiedEffect === "present" && r.settledBy === null,
        r,
      ),
      check(
        "it is still owed: listed as open work",
        again.recoveries.some((x) => x.id === r.id),
        again.recoveries.length,
      ),
    ];
    return { observed: r.state, checks, evidence: links(ctx, { runId: run.runId, barrierId }), facts: { recovery: r } };
  },
});
