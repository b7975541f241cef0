// Seed 001: "provider_response: accepted is not the settled state. The provider may race with
// cancellation and commit the effect first." The simulated provider commits while it accepts the cancel.
import { check, dbCheck, drillCase, killProviderCall, links } from "../support";

export const providerCommitsDuringCancelRequest = drillCase("provider_commits_during_cancel_request", "001", "completed_and_verified", {
  summary:
    "the provider answers the cancel with accepted but commits first: the barrier checks the authoritative effect and settles completed_and_verified with an effect receipt and rollback owner",
  needs: ["sim"],
  async run(ctx, { sim }) {
    const call = await killProviderCall(ctx, "commit_during_cancel", "drill: provider commits during cancel");
    const { run, job, stamp, admitted, barrierId, receipt, settlement: s } = call;
    const simJob = await sim.client.getJob(job.jobId);
    const eff = receipt.effect_receipts?.find((e) => e.operation_id === stamp.operationId);
    const checks = [
      check("the call was in flight at the barrier", admitted.decision === "allow" && s?.stateAtBarrier === "running", {
        admitted,
        stateAtBarrier: s?.stateAtBarrier,
      }),
      check("the provider accepted the cancel", s?.providerResponse === "accepted", s?.providerResponse),
      check("the provider itself shows the effect committed", simJob.state === "committed" && simJob.cancelRequests >= 1, {
        state: simJob.state,
        cancelRequests: simJob.cancelRequests,
      }),
      check("the settlement is completed_and_verified, not cancelled", s?.settledState === "completed_and_verified", s),
      check(
        "the receipt carries the effect receipt with a rollback owner",
        !!eff && !!eff.rollback_owner && eff.rollback_owner !== "unassigned",
        eff,
      ),
      check(
        "the receipt counts one completed_and_verified effect",
        receipt.effects?.completed_and_verified === 1 && receipt.effects?.cancelled_without_effect === 0,
        receipt.effects,
      ),
      check("nothing unknown remains: stopped_and_quiet", receipt.decision === "stopped_and_quiet", receipt.decision),
      ...(await dbCheck(
        ctx,
        (db) => db.operation(stamp.operationId),
        "db: the operation is recorded as succeeded with its effect receipt",
        (op) => op?.state === "succeeded" && op.effectReceipts >= 1,
      )),
    ];
    return {
      observed: s?.settledState ?? "pending",
      checks,
      evidence: links(ctx, { runId: run.runId, barrierId }),
      facts: { providerJob: job.jobId, settlement: s, receiptDecision: receipt.decision },
    };
  },
});
