// Seed 004: "Restart survival. Pause, restart every worker, then call. The workflow is still paused."
// The pause lives in the store: the worker pods AND the web app are restarted as new processes; the
// redelivered job is held again, a call from a restarted pod is held, and only resume lets it run.
import { check, links, opId, newRun, registerWork } from "../../lib/drill/support";
import type { EvalCase } from "./types";

export const restartSurvival: EvalCase = {
  name: "restart_survival",
  seed: "004",
  expected: "still_paused",
  summary:
    "the run is paused with a job held at a worker; the web app and every worker are restarted as new processes: the run still reads paused, the redelivered job and a fresh call are held, and only resume runs the job (once)",
  needs: [],
  async run(stack) {
    const ctx = stack.drillContext();
    const run = await newRun(ctx, { title: "release payments (restart)" });
    const stamp = await registerWork(ctx, run, "held-job", "db.compatibility_check");
    await ctx.operator.pause(run.runId, "eval: pause before restarting everything");
    const h1 = stack.worker.run(stamp, { kind: "quick" });
    const a1 = await h1.firstAdmit;
    const pids = { web: stack.web.proc.pid, worker: stack.worker.proc.pid, pod: stack.pod.proc.pid };

    await stack.web.restart();
    await Promise.all([stack.worker.restart(), stack.pod.restart()]);
    const after = { web: stack.web.proc.pid, worker: stack.worker.proc.pid, pod: stack.pod.proc.pid };
    const ran1 = await h1.started.catch(() => false);
    const holdsBefore = (await ctx.db!.decisions(stamp.operationId)).filter((d) => d.decision === "hold").length;

    const view = await stack.client(stack.fx.main.keys.operator!).getRun(run.runId);
    const call = await stack.pod.call({
      runId: run.runId,
      leaseId: run.leaseId,
      epoch: run.epoch,
      operationId: opId(ctx, "after-restart"),
      tool: "db.compatibility_check",
    });
    // The queue redelivers the job the stopped worker gave back.
    const h2 = stack.worker.run(stamp, { kind: "quick" });
    const a2 = await h2.firstAdmit;
    const holdsAfter = (await ctx.db!.decisions(stamp.operationId)).filter((d) => d.decision === "hold").length;
    await ctx.operator.resume(run.runId, "eval: resume after the restart");
    const out = await h2.outcome;
    const op = await ctx.db!.operation(stamp.operationId);
    const checks = [
      check("before the restart the job was held", a1.decision === "hold" && a1.reason === "paused", a1),
      check(
        "the web app and both pods are new processes",
        after.web !== pids.web && after.worker !== pids.worker && after.pod !== pids.pod,
        { before: pids, after },
      ),
      check("the first delivery never ran", ran1 === false),
      check("after the restart the run still reads paused", view.lifecycle === "paused", view.lifecycle),
      check("a call from a restarted pod is held", call.decision === "hold" && call.reason === "paused", call),
      check("the redelivered job is held again (a new hold on record)", a2.decision === "hold" && holdsAfter > holdsBefore, {
        a2,
        holdsBefore,
        holdsAfter,
      }),
      check(
        "after resume the job ran exactly once and succeeded",
        out.status === "completed" && out.handlerStarted && op?.state === "succeeded",
        { out, state: op?.state },
      ),
    ];
    const stillPaused = view.lifecycle === "paused" && call.decision === "hold" && a2.decision === "hold";
    return {
      observed: stillPaused ? "still_paused" : `${view.lifecycle}/${call.decision}_${call.reason}/${a2.decision}_${a2.reason}`,
      checks,
      evidence: links(ctx, { runId: run.runId }),
      facts: { pidsBefore: pids, pidsAfter: after },
    };
  },
};
