// Seed 004: "Resume. Un-pause and confirm the next call proceeds and is re-evaluated against current
// policy. The snapshot from before the pause must not decide anything." Here the world changes during
// the pause: the run's lease expires. Before the pause a call was allowed; after resume, deny.
import { check, label, links, must, newRun, opId, registerWork } from "../support";
import { sleep } from "../../platform/wait";
import type { DrillCase } from "../types";

const LEASE_TTL_SECONDS = 4;

export const resumeReEvaluated: DrillCase = {
  name: "resume_re_evaluated",
  seed: "004",
  expected: "deny_lease_expired",
  summary:
    "a call is allowed, the run is paused, its lease expires during the pause, then it is resumed: the next call and the held job are decided afresh (lease_expired), not by the pre-pause allow",
  needs: ["agent"],
  async run(ctx) {
    const worker = must(ctx.worker, "a worker");
    const pod = must(ctx.pod, "a second process");
    const run = await newRun(ctx, { title: "release payments", leaseTtlSeconds: LEASE_TTL_SECONDS });
    const body = (label_: string) => ({
      runId: run.runId,
      leaseId: run.leaseId,
      epoch: run.epoch,
      operationId: opId(ctx, label_),
      tool: "ticket.update",
    });
    const before = await pod.call(body("before-pause"));
    const stamp = await registerWork(ctx, run, "held-job", "ticket.update");
    await ctx.operator.pause(run.runId, "drill: hold on");
    const h = worker.run(stamp, { kind: "quick" });
    const held = await h.firstAdmit;
    // Wait out the lease (with a margin for clock skew against a remote server).
    await sleep(Math.max(0, Date.parse(run.validUntil) - Date.now()) + 1500);
    await ctx.operator.resume(run.runId, "drill: go on");
    const after = await pod.call(body("after-resume"));
    const out = await h.outcome;
    const checks = [
      check("before the pause the call was allowed", before.decision === "allow", before),
      check("during the pause the job was held", held.decision === "hold" && held.reason === "paused", held),
      check("after resume the call is denied lease_expired", after.decision === "deny" && after.reason === "lease_expired", after),
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
};
