// Seed 001: "A gateway can approve a call at 10:51:03, the operator can revoke the run at 10:51:04, and
// a worker can pick up the message at 10:51:12." A subagent's queued call, accepted before the root is
// killed, reaches a worker afterwards: the worker checks CURRENT authority at dequeue.
import { answered, check, dbCheck, drillCase, label, links, newTree, registerWork } from "../support";

export const queuedCallStartsAfterParentRevocation = drillCase("queued_call_starts_after_parent_revocation", "001", "deny_parent_revoked", {
  summary:
    "a subagent's call queued before the root's kill is picked up by a worker after it: the dequeue-time check denies parent_revoked and the job never runs",
  async run(ctx, { worker }) {
    const { root, child } = await newTree(ctx, "release payments (root)", "ticket update (subagent)");
    const stamp = await registerWork(ctx, child, "ticket-update", "ticket.update");
    const { barrierId } = await ctx.operator.kill(root.runId, "drill: wrong commit detected");

    // The queue delivers the message it accepted earlier.
    const h = worker.run(stamp, { kind: "quick" });
    const admit = await h.firstAdmit;
    const out = await h.outcome;
    const childView = await ctx.operator.getRun(child.runId);
    const checks = [
      check("the worker's admission was denied parent_revoked", answered(admit, "deny", "parent_revoked"), admit),
      check("the job was acknowledged without running", out.status === "discarded" && !out.handlerStarted, out),
      check(
        "the child run is killed with a newer epoch than the job's stamp",
        childView.lifecycle === "killed" && childView.epoch > stamp.epoch,
        { lifecycle: childView.lifecycle, epoch: childView.epoch, stamped: stamp.epoch },
      ),
      check(
        "the child's lease is revoked",
        childView.leases.every((l) => l.revokedAt !== null),
        childView.leases.map((l) => l.revokedAt),
      ),
      ...(await dbCheck(
        ctx,
        (db) => db.operation(stamp.operationId),
        "db: the operation is kept as cancelled_not_started (parent_revoked)",
        (op) => op?.state === "cancelled_not_started" && op.stateReason === "parent_revoked",
      )),
      ...(await dbCheck(
        ctx,
        (db) => db.decisions(stamp.operationId),
        "db: the admission is on record as deny parent_revoked",
        (ds) => ds.some((d) => d.source === "admit" && answered(d, "deny", "parent_revoked")),
      )),
    ];
    return {
      observed: label(admit.decision, admit.reason),
      checks,
      evidence: links(ctx, { runId: child.runId, barrierId }),
      facts: { rootRunId: root.runId, childRunId: child.runId, operationId: stamp.operationId, worker: worker.label, outcome: out },
    };
  },
});
