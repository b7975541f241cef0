// Seed 004: "Resume. Un-pause and confirm the next call proceeds and is re-evaluated against current
// policy. The snapshot from before the pause must not decide anything." Here the world changes during
// the pause: the run's lease expires. Before the pause a call was allowed; after resume, deny.
import { answered, callBody, check, drillCase, label, links, newRun, registerWork } from "../support";
import { sleep } from "../../platform/wait";

const LEASE_TTL_SECONDS = 4;

export const resumeReEvaluated = drillCase("resume_re_evaluated", "004", "deny_lease_expired", {
  summary:
    "a call is allowed, the run is paused, its lease expires during the pause, then it is resumed: the next call and the held job are decided afresh (lease_expired), not by the pre-pause allow",
  async run(ctx, { worker, pod }) {
    const run = await newRun(ctx, { title: "release payments", leaseTtlSeconds: LEASE_TTL_SECONDS });
    const before = await pod.call(callBody(ctx, run, "before-pause", "ticket.update"));
    const stamp = await registerWork(ctx, run, "held-job", "ticket.update");
    await ctx.operator.pause(run.runId, "drill: hold on");
    const h = worker.run(stamp, { kind: "quick" });
    const held = await h.firstAdmit;
    // Wait out the lease (with a margin for clock skew against a remote server).
    await sleep(Math.max(0, Date.parse(run.validUntil) - Date.now()) + 1500);
    await ctx.operator.resume(run.runId, "drill: go on");
    const after = await pod.call(callBody(ctx, run, "after-resume", "ticket.update"));
    const out = await h.outcome;
    const checks = [
      check("before the pause the call was allowed", before.decision === "allow", before),
      check("during the pause the job was held", answered(held, "hold", "paused"), held),
      check("after resume the call is denied lease_expired", answered(after, "deny", "lease_expired"), after),
      check(
        "the held job was discarded (lease_expired) without running",
        out.status === "discarded" && out.reason === "lease_expired" && !out.handlerStarted,
        out,
      ),
    ];
    return {
      observed: label(after.decision, after.reason),
      checks,
      evidence: links(ctx, { runId: run.runId }),
      facts: { runId: run.runId, validUntil: run.validUntil },
    };
  },
});
