// Seed 001: "Then break the status endpoint. The system should preserve the unknown outcome rather than
// invent a clean cancellation." The provider accepts the cancel; its status endpoint answers 503.
import { check, drillCase, killProviderCall, links, waitForReceipt } from "../support";

export const providerStatusUnavailable = drillCase("provider_status_unavailable", "001", "stop_incomplete_unknown_outcome", {
  summary:
    "the provider accepts the cancel but its status endpoint is down: the effect cannot be proven either way, so the settlement stays unknown and the receipt says stop_incomplete and names the reconciliation",
  needs: ["sim"],
  async run(ctx) {
    const {
      run,
      job,
      stamp,
      barrierId,
      receipt,
      view,
      settlement: s,
    } = await killProviderCall(ctx, "status_down", "drill: status endpoint down");
    const rec = receipt.reconciliation?.find((r) => r.operation_id === stamp.operationId);
    const checks = [
      check("the provider accepted the cancel", s?.providerResponse === "accepted", s?.providerResponse),
      check("the effect check was unavailable", s?.effectObserved === "unavailable", s?.effectObserved),
      check("the settlement is unknown, not cancelled", s?.settledState === "unknown", s?.settledState),
      check(
        "the receipt counts one unknown and no clean cancellation",
        receipt.effects?.unknown === 1 && receipt.effects?.cancelled_without_effect === 0,
        receipt.effects,
      ),
      check("the receipt lists the reconciliation for the operation", !!rec, receipt.reconciliation),
      check(
        "the ladder says effects are uncertain, not settled",
        view.ladder.effects_settled?.status === "uncertain",
        view.ladder.effects_settled,
      ),
    ];
    let assignee: string | null = null;
    if (ctx.db) {
      // A manager assigns it (the console's action); the receipt is re-issued naming the person.
      assignee = await ctx.db.assignReconciliation(barrierId);
      const v2 = await waitForReceipt(ctx, ctx.operator, barrierId, receipt.version + 1);
      const named = v2.reconciliation?.find((r) => r.operation_id === stamp.operationId);
      checks.push(
        check(
          "after assignment a new receipt version names the assignee and stays stop_incomplete",
          !!assignee && named?.assignee === assignee && v2.decision === "stop_incomplete",
          { version: v2.version, named, assignee },
        ),
      );
    }
    const observed = `${receipt.decision}_${s?.settledState === "unknown" ? "unknown_outcome" : (s?.settledState ?? "pending")}`;
    return {
      observed,
      checks,
      evidence: links(ctx, { runId: run.runId, barrierId }),
      facts: { providerJob: job.jobId, settlement: s, reconciliation: rec, assignee },
    };
  },
});
