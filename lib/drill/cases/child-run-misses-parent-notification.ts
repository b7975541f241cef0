// Seed 001: "Do not rely on the parent to notify every child. The parent may be the process that
// crashed." The child's gateway never hears of the kill (it subscribes to nothing); its next call is
// decided at the gate from the control plane's current authority.
import { check, links, must, newRun, opId } from "../support";
import type { DrillCase } from "../types";

export const childRunMissesParentNotification: DrillCase = {
  name: "child_run_misses_parent_notification",
  seed: "001",
  expected: "deny_on_gateway_authority_check",
  summary:
    "the parent is killed and its child's gateway (another process) never receives a notification: its next call is denied parent_revoked at the gate and no external call is sent",
  needs: ["agent"],
  async run(ctx) {
    const gateway = must(ctx.pod, "a second process");
    const root = await newRun(ctx, { title: "release payments (root)" });
    const child = await newRun(ctx, { parentRunId: root.runId, title: "ticket update (subagent)" });
    const { barrierId } = await ctx.operator.kill(root.runId, "drill: parent stopped; child not told");
    const operationId = opId(ctx, "child-call");
    const answer = await gateway.call(
      { runId: child.runId, leaseId: child.leaseId, epoch: child.epoch, operationId, tool: "deployment.reserve_preview" },
      ctx.sim ? { simUrl: ctx.sim.url } : undefined,
    );
    const rootView = await ctx.operator.getRun(root.runId);
    const checks = [
      check("the gate denied the child's call parent_revoked", answer.decision === "deny" && answer.reason === "parent_revoked", answer),
      check("the current epoch is newer than the child's", (answer.currentEpoch ?? 0) > child.epoch, {
        child_epoch: child.epoch,
        current: answer.currentEpoch,
      }),
      check("the gateway sent no external call", !answer.externalCallSent),
    ];
    if (ctx.sim) {
      const { jobs } = (await (await fetch(`${ctx.sim.url}/jobs`)).json()) as { jobs: { operationId: string | null }[] };
      checks.push(check("the provider holds no job for the call", !jobs.some((j) => j.operationId === operationId)));
    }
    if (ctx.db) {
      const ds = await ctx.db.decisions(operationId);
      checks.push(
        check(
          "db: the deny is on record",
          ds.some((d) => d.decision === "deny" && d.reason === "parent_revoked"),
          ds,
        ),
      );
    }
    const denied =
      answer.decision === "deny" && (answer.reason === "parent_revoked" || answer.reason === "killed") && !answer.externalCallSent;
    return {
      observed: denied ? "deny_on_gateway_authority_check" : `${answer.decision}_${answer.reason}`,
      checks,
      evidence: links(ctx, { runId: child.runId, barrierId }),
      // The article's child_dispatch_check, as the system answered it.
      facts: {
        child_dispatch_check: {
          child_run: child.runId,
          parent_run: root.runId,
          child_epoch: child.epoch,
          current_parent_epoch: rootView.epoch,
          parent_lease_status: rootView.leases.every((l) => l.revokedAt) ? "revoked" : "active",
          decision: `${answer.decision}_${answer.reason}`,
          external_call_sent: answer.externalCallSent,
        },
        gateway: gateway.label,
      },
    };
  },
};
