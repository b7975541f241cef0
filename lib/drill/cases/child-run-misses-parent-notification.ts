// Seed 001: "Do not rely on the parent to notify every child. The parent may be the process that
// crashed." The child's gateway never hears of the kill (it subscribes to nothing); its next call is
// decided at the gate from the control plane's current authority.
import { answered, callBody, check, dbCheck, drillCase, links, newTree } from "../support";

export const childRunMissesParentNotification = drillCase(
  "child_run_misses_parent_notification",
  "001",
  "deny_on_gateway_authority_check",
  {
    summary:
      "the parent is killed and its child's gateway (another process) never receives a notification: its next call is denied parent_revoked at the gate and no external call is sent",
    async run(ctx, { pod: gateway }) {
      const { root, child } = await newTree(ctx, "release payments (root)", "ticket update (subagent)");
      const { barrierId } = await ctx.operator.kill(root.runId, "drill: parent stopped; child not told");
      const body = callBody(ctx, child, "child-call", "deployment.reserve_preview");
      const answer = await gateway.call(body, ctx.sim ? { simUrl: ctx.sim.url } : undefined);
      const rootView = await ctx.operator.getRun(root.runId);
      const checks = [
        check("the gate denied the child's call parent_revoked", answered(answer, "deny", "parent_revoked"), answer),
        check("the current epoch is newer than the child's", (answer.currentEpoch ?? 0) > child.epoch, {
          child_epoch: child.epoch,
          current: answer.currentEpoch,
        }),
        check("the gateway sent no external call", !answer.externalCallSent),
      ];
      if (ctx.sim) {
        const { jobs } = (await (await fetch(`${ctx.sim.url}/jobs`)).json()) as { jobs: { operationId: string | null }[] };
        checks.push(check("the provider holds no job for the call", !jobs.some((j) => j.operationId === body.operationId)));
      }
      checks.push(
        ...(await dbCheck(
          ctx,
          (db) => db.decisions(body.operationId),
          "db: the deny is on record",
          (ds) => ds.some((d) => answered(d, "deny", "parent_revoked")),
        )),
      );
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
  },
);
