// Seed 004: "Kill with a full queue. Kill a workflow with jobs queued behind it. Confirm none of them
// start." The queue is healthy and keeps delivering after the kill; the worker's dequeue check is
// what stops them. A long job at the head of the queue is running when the kill lands.
import { barrierView, check, dbCheck, drillCase, links, newTree, registerWork, startLongJob } from "../support";
import type { JobStamp } from "../../agent/sdk/worker/stamp";

const QUEUED = 6;

export const killWithFullQueue = drillCase("kill_with_full_queue", "004", "none_started", {
  summary:
    "jobs of the run and its subagent wait behind a running long job; after the kill the queue still delivers every one: each is acknowledged without running, kept as cancelled_not_started",
  async run(ctx, { worker }) {
    const { root, child } = await newTree(ctx, "release payments (root)", "checks (subagent)");
    const { handle: long } = await startLongJob(ctx, worker, root, "head-long", "deployment.reserve_preview");
    const queued: JobStamp[] = [];
    for (let i = 0; i < QUEUED; i++)
      queued.push(await registerWork(ctx, i % 2 ? child : root, `queued-${i}`, i % 2 ? "ticket.update" : "db.compatibility_check"));
    const delayed = await registerWork(ctx, child, "delayed", "db.compatibility_recheck", "scheduled", {
      notBefore: new Date(Date.now() + 60_000).toISOString(),
    });
    const { barrierId } = await ctx.operator.kill(root.runId, "drill: kill with a full queue");
    const deliveries = [...queued, delayed].map((s) => worker.run(s, { kind: "quick" }));
    const outs = await Promise.all(deliveries.map((d) => d.outcome));
    const headOut = await long.outcome;
    const view = await barrierView(ctx.operator, barrierId);
    const started = outs.filter((o) => o.handlerStarted).length;
    const checks = [
      check(
        "no queued job started",
        started === 0,
        outs.map((o) => `${o.status}:${o.reason ?? ""}`),
      ),
      check(
        "every delivery was discarded as killed / parent_revoked / stale_epoch",
        outs.every((o) => o.status === "discarded" && ["killed", "parent_revoked", "stale_epoch"].includes(o.reason ?? "")),
      ),
      check(
        "the barrier cancelled the queued and scheduled work",
        view.counts.queuedCancelled === QUEUED && view.counts.scheduledCancelled === 1,
        view.counts,
      ),
      check("the long job at the head was aborted (unknown outcome)", headOut.status === "aborted_unknown", headOut),
      ...(await dbCheck(
        ctx,
        (db) => Promise.all([...queued, delayed].map((s) => db.operation(s.operationId))),
        "db: every queued operation is kept as cancelled_not_started",
        (rows) => rows.every((r) => r?.state === "cancelled_not_started"),
        (rows) => rows.map((r) => r?.state),
      )),
    ];
    return {
      observed: started === 0 ? "none_started" : `${started}_started`,
      checks,
      evidence: links(ctx, { runId: root.runId, barrierId }),
      facts: {
        delivered: outs.length,
        outcomes: outs.map((o, i) => ({ operationId: [...queued, delayed][i]!.operationId, status: o.status, reason: o.reason })),
      },
    };
  },
});
