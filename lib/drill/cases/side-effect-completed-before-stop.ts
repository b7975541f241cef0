// Seed 000: "Side effect completed before stop — Record completion. Do not rewrite history to
// 'canceled'." Two ways an effect precedes the stop: the executor reported it before the kill, and a
// provider job that had already committed when the kill arrived.
import { check, dbCheck, drillCase, gatedCall, killToReceipt, links, providerWork, settlementOf } from "../support";

export const sideEffectCompletedBeforeStop = drillCase("side_effect_completed_before_stop", "000", "recorded_completed", {
  summary:
    "a ticket update completed (with its effect receipt) before the kill, and a provider job had already committed: after the stop both stay recorded as completed — a replay is already_applied, nothing is counted as cancelled",
  async run(ctx, { agent }) {
    const { run, body } = await gatedCall(ctx, "ticket update", "ticket-update", "ticket.update");
    const done = body.operationId;
    const effectId = `ticket-${ctx.tag}`;
    await agent.complete(done, {
      outcome: "succeeded",
      effect: { providerOperationId: effectId, detail: { ticket: "PAY-8bc911d", field: "status" }, rollbackOwner: "release-oncall" },
    });
    let committed: { operationId: string; jobId: string } | null = null;
    if (ctx.sim) {
      const job = await ctx.sim.client.createJob({ runId: run.runId });
      await ctx.sim.client.commit(job.jobId);
      const stamp = await providerWork(ctx, run, job.jobId);
      await agent.admit(stamp.operationId);
      committed = { operationId: stamp.operationId, jobId: job.jobId };
    }
    const { barrierId, receipt, view } = await killToReceipt(ctx, run.runId, "drill: stop after an effect completed");
    const replay = await agent.gate(body);
    const checks = [
      check(
        "a replay of the completed call is already_applied, with its effect receipt",
        replay.decision === "deny" &&
          replay.reason === "already_applied" &&
          replay.operation?.state === "succeeded" &&
          replay.operation.effectReceipt?.providerOperationId === effectId,
        replay,
      ),
      check(
        "the effect that completed before the stop is in the stop receipt with its rollback owner",
        receipt.effect_receipts?.some((e) => e.operation_id === done && e.rollback_owner === "release-oncall") === true,
        receipt.effect_receipts,
      ),
      check(
        "the stop cancelled nothing and counted no clean cancellation",
        receipt.work?.queued_cancelled === 0 && receipt.effects?.cancelled_without_effect === 0,
        { work: receipt.work, effects: receipt.effects },
      ),
    ];
    let secondOk = true;
    if (committed) {
      const c = committed;
      const s = settlementOf(view, c.operationId);
      const eff = receipt.effect_receipts?.find((e) => e.operation_id === c.operationId);
      secondOk = s?.settledState === "completed_and_verified" && !!eff;
      checks.push(
        check("the provider job that had committed settles completed_and_verified", s?.settledState === "completed_and_verified", s),
      );
      checks.push(
        check(
          "its effect receipt and rollback owner are in the stop receipt",
          !!eff && !!eff.rollback_owner && eff.rollback_owner !== "unassigned",
          eff,
        ),
      );
      checks.push(check("the receipt is stopped_and_quiet (nothing unknown)", receipt.decision === "stopped_and_quiet", receipt.decision));
    }
    checks.push(
      ...(await dbCheck(
        ctx,
        (db) => db.operation(done),
        "db: the completed operation is still succeeded with one effect receipt",
        (op) => op?.state === "succeeded" && op.effectReceipts === 1,
      )),
    );
    const listed = receipt.effect_receipts?.some((e) => e.operation_id === done) === true;
    const ok = replay.operation?.state === "succeeded" && listed && secondOk;
    return {
      observed: ok ? "recorded_completed" : `replay=${replay.reason}/${replay.operation?.state ?? "?"}`,
      checks,
      evidence: links(ctx, { runId: run.runId, barrierId }),
      facts: { completedOperation: done, providerCommitted: committed },
    };
  },
});
