// Seed 004: "Pause from another pod. Pause the workflow, then issue a tool call from a different
// worker. It must be held." The pause is a fact in the store; every process reads it at its gate.
import { answered, callBody, check, dbCheck, drillCase, links, newRun, registerWork } from "../support";

export const pauseFromAnotherProcess = drillCase("pause_from_another_process", "004", "held", {
  summary:
    "the operator pauses; a tool call from a different process and a queued job at a worker are both held (not run), and after resume the job runs once on a fresh decision",
  async run(ctx, { worker, pod }) {
    const run = await newRun(ctx, { title: "release payments" });
    const stamp = await registerWork(ctx, run, "compat-check", "db.compatibility_check");
    await ctx.operator.pause(run.runId, "drill: inspecting the commit");
    const call = await pod.call(callBody(ctx, run, "pod-call", "deployment.reserve_preview"));
    const h = worker.run(stamp, { kind: "quick" });
    const firstAdmit = await h.firstAdmit;
    const paused = await ctx.operator.getRun(run.runId);
    await ctx.operator.resume(run.runId, "drill: commit verified");
    const out = await h.outcome;
    const after = await pod.call(callBody(ctx, run, "pod-call-after", "deployment.reserve_preview"));
    const checks = [
      check("the other process's call was held (paused)", answered(call, "hold", "paused"), call),
      check("the worker's job was held at dequeue", answered(firstAdmit, "hold", "paused"), firstAdmit),
      check("the run read paused while held", paused.lifecycle === "paused", paused.lifecycle),
      check("after resume the job ran once and completed", out.status === "completed" && out.handlerStarted, out),
      check("after resume a new call is allowed", after.decision === "allow", after),
      ...(await dbCheck(
        ctx,
        (db) => db.decisions(stamp.operationId),
        "db: hold then allow are on record for the job",
        (ds) => ds.some((d) => d.decision === "hold") && ds.at(-1)?.decision === "allow",
        (ds) => ds.map((d) => `${d.source}:${d.decision}:${d.reason}`),
      )),
    ];
    const held = call.decision === "hold" && firstAdmit.decision === "hold";
    return {
      observed: held ? "held" : `${call.decision}_${call.reason}/${firstAdmit.decision}_${firstAdmit.reason}`,
      checks,
      evidence: links(ctx, { runId: run.runId }),
      facts: { runId: run.runId, pod: pod.label, worker: worker.label },
    };
  },
});
