// Seed 001: "Write the barrier durably first. If the cancellation worker crashes halfway through,
// another worker can resume from the same record." Engine A is SIGKILLed while the provider holds its
// cancel request unanswered; two fresh engines race to finish the barrier from its rows.
import { prisma } from "../../lib/platform/db/prisma";
import { check, links, newRun, registerWork, waitForReceipt } from "../../lib/drill/support";
import { waitUntil } from "../support/proc";
import { SIM_PROVIDER } from "../support/fixtures";
import type { EvalCase } from "./types";

export const cancellationWorkerCrashesMidBarrier: EvalCase = {
  name: "cancellation_worker_crashes_mid_barrier",
  seed: "001",
  expected: "resume_from_durable_barrier",
  summary:
    "the barrier engine is SIGKILLed mid-barrier (one settlement done, one cancel unanswered): another engine takes over from the durable barrier row when the claim expires, finishes it, and exactly one receipt is issued",
  needs: [],
  async run(stack) {
    const team = stack.fx.crash;
    const operator = stack.client(team.keys.operator!);
    const ctx = { ...stack.drillContext(), operator, agent: stack.client(team.keys.agent!), db: undefined, tag: `crash${stack.tag}` };
    const sim = stack.sim.client;
    const run = await newRun(ctx, { title: "release payments (engine crash)" });
    const fast = await sim.createJob({ mode: "cancel_cleanly", runId: run.runId });
    const slow = await sim.createJob({ mode: "slow", delayMs: 60_000, runId: run.runId });
    const fastOp = await registerWork(ctx, run, "fast", "deployment.reserve_preview", "queued", {
      providerName: SIM_PROVIDER,
      providerJobId: fast.jobId,
    });
    const slowOp = await registerWork(ctx, run, "slow", "deployment.reserve_preview", "queued", {
      providerName: SIM_PROVIDER,
      providerJobId: slow.jobId,
    });
    await ctx.agent!.admit(fastOp.operationId);
    await ctx.agent!.admit(slowOp.operationId);
    const env = { QUIESCE_BARRIER_CLAIM_MS: "2000" };
    const a = stack.startEngine("engine-A", team.teamId, env);
    const { barrierId } = await operator.kill(run.runId, "eval: engine crash drill");

    const settlements = () => prisma().settlement.findMany({ where: { barrierId }, include: { operation: true } });
    await waitUntil(
      "engine A mid-barrier",
      async () => {
        if (!a.alive()) throw new Error(`engine A exited:\n${a.tail()}`);
        const ss = await settlements();
        const f = ss.find((s) => s.operation.operationId === fastOp.operationId);
        const s = ss.find((s) => s.operation.operationId === slowOp.operationId);
        return (
          f?.settledState === "cancelled_without_effect" &&
          !!s?.cancelRequestedAt &&
          s.providerResponse === null &&
          (await sim.getJob(slow.jobId)).cancelRequests === 1
        );
      },
      90_000,
      100,
    );
    const atCrash = await prisma().barrier.findUniqueOrThrow({ where: { id: barrierId } });
    await a.stop("SIGKILL");
    const killed = (await a.exited).signal;

    // The provider answers promptly from now on; A's unanswered request died with A.
    await sim.setMode(slow.jobId, "cancel_cleanly");
    const b1 = stack.startEngine("engine-B1", team.teamId, env);
    const b2 = stack.startEngine("engine-B2", team.teamId, env);
    try {
      const receipt = await waitForReceipt(ctx, operator, barrierId);
      // Both engines keep running a little: neither may issue a second receipt.
      await waitUntil(
        "both engines idle",
        async () => {
          const b = await prisma().barrier.findUniqueOrThrow({ where: { id: barrierId } });
          return b.claimedBy === null && /receipt v1/.test(b1.tail(200) + b2.tail(200));
        },
        30_000,
        200,
      );
      const receipts = await prisma().stopReceipt.findMany({ where: { barrierId } });
      const finisher = /receipt v1/.test(b1.tail(200)) ? "engine-B1" : /receipt v1/.test(b2.tail(200)) ? "engine-B2" : null;
      const slowS = (await settlements()).find((s) => s.operation.operationId === slowOp.operationId)!;
      const [slowJob, fastJob] = [await sim.getJob(slow.jobId), await sim.getJob(fast.jobId)];
      const checks = [
        check(
          "engine A held the claim mid-settlement when it was killed",
          atCrash.claimedBy === "engine-A" && atCrash.phase === "settling",
          { claimedBy: atCrash.claimedBy, phase: atCrash.phase },
        ),
        check("engine A died of SIGKILL (no clean shutdown)", killed === "SIGKILL", killed),
        check("another engine finished the barrier", finisher !== null, finisher),
        check(
          "exactly one receipt was issued",
          receipts.length === 1,
          receipts.map((r) => r.version),
        ),
        check("the receipt is stopped_and_quiet", receipt.decision === "stopped_and_quiet", receipt.decision),
        check(
          "the unanswered cancel was re-sent and settled cancelled_without_effect",
          slowS.settledState === "cancelled_without_effect" && slowJob.cancelRequests >= 2,
          { settled: slowS.settledState, cancelRequests: slowJob.cancelRequests },
        ),
        check("the settlement A finished was not redone", fastJob.cancelRequests === 1, fastJob.cancelRequests),
        check(
          "the cancel time survived the crash (the deadline counts from A's request)",
          slowS.cancelRequestedAt!.getTime() < atCrash.claimExpiresAt!.getTime(),
          { cancelRequestedAt: slowS.cancelRequestedAt, claimExpiresAt: atCrash.claimExpiresAt },
        ),
      ];
      const resumed = killed === "SIGKILL" && finisher !== null && receipts.length === 1;
      return {
        observed: resumed ? "resume_from_durable_barrier" : `receipts=${receipts.length}/finisher=${finisher ?? "none"}`,
        checks,
        evidence: links(ctx, { runId: run.runId, barrierId }),
        facts: { killedEngine: { name: "engine-A", pid: a.pid }, finisher, engines: [b1.pid, b2.pid] },
      };
    } finally {
      await Promise.all([b1.stop("SIGTERM"), b2.stop("SIGTERM")]);
    }
  },
};
