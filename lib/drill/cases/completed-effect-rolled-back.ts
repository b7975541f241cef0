// Seed 000: "record the effect and start the approved recovery path"; "if an effect completed before
// cancellation, include its effect receipt and rollback owner". The kill finds the preview reserved; its
// recovery asks the provider to release it, and only the provider's own check that it is gone makes it
// rolled back — on the receipt as the provider's word, with when.
import { check, drillCase, killProviderCall, links, must, waitForReceipt } from "../support";

export const completedEffectRolledBackAndVerified = drillCase("completed_effect_rolled_back_and_verified", "000", "rolled_back", {
  summary:
    "a kill finds a completed effect: a recovery item opens with the rollback owner; starting it releases the preview at the provider, and it is rolled_back only when the provider's effect check answers absent; the next receipt version says so",
  needs: ["sim"],
  async run(ctx, { sim }) {
    const call = await killProviderCall(ctx, "commit_during_cancel", "drill: completed effect to roll back");
    const { run, job, stamp, barrierId, receipt } = call;
    const [item] = (await ctx.operator.listRecoveries({ barrierId, state: "all" })).recoveries;
    const opened = must(item, "a recovery item for the completed effect");
    const done = await ctx.operator.startRecovery(opened.id);
    const simJob = await sim.client.getJob(job.jobId);
    const next = await waitForReceipt(ctx, ctx.operator, barrierId, 2);
    const line = (next.recovery as { operation_id: string; state: string; settled_by: string | null }[] | undefined)?.find(
      (r) => r.operation_id === stamp.operationId,
    );
    const summary = (next.summary as string[] | undefined) ?? [];
    const checks = [
      check("the first receipt found the effect completed", receipt.effects?.completed_and_verified === 1, receipt.effects),
      check(
        "an item opened at once with the rollback owner and a named person",
        opened.state === "open" && !!opened.rollbackOwner && !!opened.assignee,
        opened,
      ),
      check("the provider was asked once and released the preview", simJob.state === "compensated" && simJob.compensateRequests === 1, {
        state: simJob.state,
        compensateRequests: simJob.compensateRequests,
      }),
      check(
        "rolled_back on the provider's later check that the effect is absent",
        done.state === "rolled_back" &&
          done.settledBy === "provider" &&
          done.verifiedEffect === "absent" &&
          !!done.verifiedAt &&
          !!done.compensationRequestedAt &&
          done.verifiedAt >= done.compensationRequestedAt,
        done,
      ),
      check(
        "the next receipt lists it as rolled back by the provider",
        line?.state === "rolled_back" && line.settled_by === "provider",
        line,
      ),
      check(
        "its summary says so, and never 'nothing to roll back'",
        summary.some((x) => x.includes("1 rolled back (verified by")) && !summary.some((x) => x.includes("nothing to roll back")),
        summary,
      ),
      check("the stop is still about quiet: stopped_and_quiet", next.decision === "stopped_and_quiet", next.decision),
    ];
    return {
      observed: done.state,
      checks,
      evidence: links(ctx, { runId: run.runId, barrierId }),
      facts: { recovery: done, providerJob: simJob },
    };
  },
});
