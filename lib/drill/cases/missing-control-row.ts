// Seed 004: "If the row is missing [...] an unreadable or absent control record should not resolve to
// 'carry on'. A missing row collapses to the stopped state." Fail closed at every entry point.
import { check, label, links, must, newRun, opId } from "../support";
import type { DrillCase } from "../types";

export const missingControlRow: DrillCase = {
  name: "missing_control_row",
  seed: "004",
  expected: "deny_missing_state",
  summary:
    "a call for a run with no control record, a job whose operation was never registered (and, in evals, a run whose lease row was removed) are all denied missing_state: absent state never means carry on",
  needs: ["agent"],
  async run(ctx) {
    const pod = must(ctx.pod, "a second process");
    const worker = must(ctx.worker, "a worker");
    const ghost = await pod.call({
      runId: `run_${ctx.tag}_missing`,
      leaseId: `lease_${ctx.tag}_missing`,
      epoch: 1,
      operationId: opId(ctx, "ghost"),
      tool: "deployment.reserve_preview",
    });
    const run = await newRun(ctx, { title: "release payments" });
    const unregistered = await worker.run(
      { runId: run.runId, leaseId: run.leaseId, epoch: run.epoch, operationId: opId(ctx, "never-registered") },
      { kind: "quick" },
    ).outcome;
    const checks = [
      check(
        "a call for a run without a control record is denied missing_state",
        ghost.decision === "deny" && ghost.reason === "missing_state",
        ghost,
      ),
      check(
        "a job whose operation is unknown is discarded without running",
        unregistered.status === "discarded" && unregistered.reason === "missing_state" && !unregistered.handlerStarted,
        unregistered,
      ),
    ];
    if (ctx.db) {
      const victim = await newRun(ctx, { title: "lease row removed" });
      await ctx.db.dropLease(victim.leaseId);
      const gone = await pod.call({
        runId: victim.runId,
        leaseId: victim.leaseId,
        epoch: victim.epoch,
        operationId: opId(ctx, "lease-gone"),
        tool: "deployment.reserve_preview",
      });
      checks.push(
        check(
          "db: a run whose lease row was removed is denied missing_state",
          gone.decision === "deny" && gone.reason === "missing_state",
          gone,
        ),
      );
    }
    return {
      observed: label(ghost.decision, ghost.reason),
      checks,
      evidence: links(ctx, { runId: run.runId }),
      facts: { ghost, unregistered },
    };
  },
};
