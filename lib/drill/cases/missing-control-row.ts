// Seed 004: "If the row is missing [...] an unreadable or absent control record should not resolve to
// 'carry on'. A missing row collapses to the stopped state." Fail closed at every entry point.
import { answered, callBody, check, dbCheck, drillCase, label, links, newRun, opId } from "../support";

export const missingControlRow = drillCase("missing_control_row", "004", "deny_missing_state", {
  summary:
    "a call for a run with no control record, a job whose operation was never registered (and, in evals, a run whose lease row was removed) are all denied missing_state: absent state never means carry on",
  async run(ctx, { pod, worker }) {
    const nobody = { runId: `run_${ctx.tag}_missing`, leaseId: `lease_${ctx.tag}_missing`, epoch: 1 };
    const ghost = await pod.call(callBody(ctx, nobody, "ghost", "deployment.reserve_preview"));
    const run = await newRun(ctx, { title: "release payments" });
    const unregistered = await worker.run(
      { runId: run.runId, leaseId: run.leaseId, epoch: run.epoch, operationId: opId(ctx, "never-registered") },
      { kind: "quick" },
    ).outcome;
    const checks = [
      check("a call for a run without a control record is denied missing_state", answered(ghost, "deny", "missing_state"), ghost),
      check(
        "a job whose operation is unknown is discarded without running",
        unregistered.status === "discarded" && unregistered.reason === "missing_state" && !unregistered.handlerStarted,
        unregistered,
      ),
      ...(await dbCheck(
        ctx,
        async (db) => {
          const victim = await newRun(ctx, { title: "lease row removed" });
          await db.dropLease(victim.leaseId);
          return pod.call(callBody(ctx, victim, "lease-gone", "deployment.reserve_preview"));
        },
        "db: a run whose lease row was removed is denied missing_state",
        (gone) => answered(gone, "deny", "missing_state"),
      )),
    ];
    return {
      observed: label(ghost.decision, ghost.reason),
      checks,
      evidence: links(ctx, { runId: run.runId }),
      facts: { ghost, unregistered },
    };
  },
});
