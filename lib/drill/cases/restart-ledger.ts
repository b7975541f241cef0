// Seed 000: a killed task starts again only on settled ground — and the approved-artifact handoff fixture
// across a restart: a retry of an effect that completed resolves as already applied, never runs twice; work
// that was cancelled before it started runs again.
import type { DrillContext } from "../types";
import { check, drillCase, killToReceipt, type Parties, links, must, newRun, providerWork, registerWork, statusOf } from "../support";

/** A root with a call the provider commits during the kill, and a queued job the kill cancels before it starts. */
async function killedRelease(ctx: DrillContext, { agent, sim }: Pick<Parties, "agent" | "sim">, reason: string) {
  const run = await newRun(ctx, { title: "release" });
  const job = await sim.client.createJob({ mode: "commit_during_cancel", runId: run.runId });
  const stamp = await providerWork(ctx, run, job.jobId);
  await agent.admit(stamp.operationId);
  const queued = await registerWork(ctx, run, "notify", "slack.post");
  const stop = await killToReceipt(ctx, run.runId, reason);
  return { run, stamp, queued, ...stop };
}

export const restartBlockedByOpenRecovery = drillCase("restart_blocked_by_open_recovery", "000", "409_recovery_open", {
  summary:
    "a killed root whose stop found a completed effect cannot restart while that effect's recovery is open: 409 naming it, no new run; once the owner records it, the restart goes through",
  needs: ["sim"],
  async run(ctx, parties) {
    const { run, barrierId, stamp } = await killedRelease(ctx, parties, "drill: restart blocked");
    let refused: unknown = null;
    await ctx.operator.restartRun(run.runId, "drill: try again").catch((e: unknown) => (refused = e));
    const e = refused as { status?: number; message?: string } | null;
    const [item] = (await ctx.operator.listRecoveries({ barrierId, state: "all" })).recoveries;
    await ctx.operator.recordRecovery(must(item, "the recovery item").id, { state: "accepted", note: "drill: keep it", evidence: "drill" });
    const restarted = await ctx.operator.restartRun(run.runId, "drill: try again");
    const checks = [
      check("the restart was refused with 409", e?.status === 409, e?.status),
      check("the refusal names the open recovery", !!e?.message?.includes(`recovery of ${stamp.operationId} is open`), e?.message),
      check("after the owner's record it restarts", restarted.restartedFrom === run.runId, restarted),
    ];
    return {
      observed: e?.status === 409 && e.message?.includes("recovery") ? "409_recovery_open" : `status_${e?.status ?? "ok"}`,
      checks,
      evidence: links(ctx, { runId: run.runId, barrierId }),
      facts: { refusal: e?.message, restarted: restarted.runId },
    };
  },
});

export const restartReplaysLedgerAlreadyApplied = drillCase("restart_replays_ledger_already_applied", "000", "already_applied", {
  summary:
    "a restarted run inherits the old tree's ledger: replaying the operationId whose effect completed answers already_applied with its effect receipt (the effect is not repeated); the operationId that was cancelled before it started is allowed again",
  needs: ["sim"],
  async run(ctx, parties) {
    const { run, barrierId, stamp, queued } = await killedRelease(ctx, parties, "drill: restart with ledger");
    const [item] = (await ctx.operator.listRecoveries({ barrierId, state: "all" })).recoveries;
    await ctx.operator.recordRecovery(must(item, "the recovery item").id, { state: "accepted", note: "drill", evidence: "drill" });
    return restartAndReplay(ctx, parties.agent, run.runId, barrierId, stamp.operationId, queued.operationId);
  },
});

async function restartAndReplay(
  ctx: DrillContext,
  agent: Parties["agent"],
  oldRunId: string,
  barrierId: string,
  appliedOp: string,
  cancelledOp: string,
) {
  const r = await ctx.operator.restartRun(oldRunId, "drill: the right commit");
  const view = await agent.getRun(r.runId);
  const leaseId = must(view.leases[0]?.leaseId, "the new run's lease (its holder reads it)");
  await agent.loadLedger(r.runId);
  const fresh = await registerWork(ctx, { runId: r.runId, leaseId, epoch: r.epoch }, "after-restart", "slack.post");
  const applied = await agent.gate({ runId: r.runId, leaseId, epoch: r.epoch, operationId: appliedOp, tool: "deployment.reserve_preview" });
  const again = await agent.gate({ runId: r.runId, leaseId, epoch: r.epoch, operationId: cancelledOp, tool: "slack.post" });
  const stranger = ctx.stranger ? await statusOf(ctx.stranger.restartRun(oldRunId, "drill: stranger")) : "not run";
  const checks = [
    check("the new run names the old one and its quiet receipt", r.restartedFrom === oldRunId && r.restartedFromDigest.length === 64, r),
    check(
      "the ledger lists the completed call as already applied",
      r.ledger.some((e) => e.operationId === appliedOp && e.outcome === "already_applied"),
      r.ledger,
    ),
    check(
      "replaying the completed call answers already_applied with its effect receipt",
      applied.decision === "deny" && applied.reason === "already_applied" && !!applied.operation?.effectReceipt,
      applied,
    ),
    check("the call cancelled before it started runs again", again.decision === "allow", again),
    check("new work under the new run is admitted as usual", (await agent.admit(fresh.operationId)).decision === "allow"),
    check("another machine key of the team cannot restart anything", stranger === 403 || stranger === "not run", stranger),
  ];
  return {
    observed: applied.reason ?? applied.decision,
    checks,
    evidence: links(ctx, { runId: r.runId, barrierId }),
    facts: { restarted: r.runId, ledger: r.ledger },
  };
}
