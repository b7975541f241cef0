// The rules of evidence inside a team (docs/security/authorization.md#holders): a call is in flight when its run is
// killed and a person owns the unknown outcome. Another machine key of the same team — it never touched
// the run — reports a success with a forged effect: refused, and the receipt does not move. The holder's
// own late report is kept once as a claim: the outcome stays unknown and the person keeps it.
import { barrierView, check, dbCheck, drillCase, gatedCall, links, settlementOf, statusOf, waitForReceipt } from "../support";

export const lateReportFromStranger = drillCase("late_report_from_stranger_changes_nothing", "000", "nothing_changed", {
  summary:
    "a killed run's call is unknown and owned by a person; another key of the team reports a forged success: 403, no settlement, no new receipt; the holder's repeated late report is one claim, never a settlement",
  needs: ["stranger"],
  async run(ctx, { agent, stranger }) {
    const { run, body, answer: g } = await gatedCall(ctx, "deploy that was in flight", "in-flight-deploy", "deployment.apply");
    const op = body.operationId;
    const { barrierId } = await ctx.operator.kill(run.runId, "drill: stop during a deploy");
    const v1 = await waitForReceipt(ctx, ctx.operator, barrierId);
    const forged = await statusOf(
      stranger.complete(op, { outcome: "succeeded", effect: { providerOperationId: "forged-deploy", detail: { by: "not the holder" } } }),
    );
    const observed = await statusOf(stranger.reportObserved(run.runId, { meaning: "process_terminated" }));
    const afterStranger = await ctx.operator.getReceipt(barrierId);
    const holderAnswers: (number | "ok" | "unreachable")[] = [];
    for (let i = 0; i < 3; i++)
      holderAnswers.push(await statusOf(agent.complete(op, { outcome: "succeeded", effect: { providerOperationId: "deploy-77" } })));
    const v2 = await waitForReceipt(ctx, ctx.operator, barrierId, v1.version + 1);
    const view = await barrierView(ctx.operator, barrierId);
    const s = settlementOf(view, op);
    const claims = (v2 as { claims_not_verified?: { operation_id: string; reported_by: string }[] }).claims_not_verified ?? [];
    const effects = v2.effects as Record<string, number> | undefined;
    const checks = [
      check("the call was in flight when the run was killed", g.decision === "allow", g),
      check(
        "receipt v1 is stop_incomplete with the outcome unknown",
        v1.decision === "stop_incomplete" && v1.effects?.unknown === 1,
        v1.effects,
      ),
      check("another key's forged completion is refused (403)", forged === 403, forged),
      check("another key's observation is refused (403)", observed === 403, observed),
      check("the stranger changed no receipt", afterStranger.version === v1.version && afterStranger.digest === v1.digest, {
        before: [v1.version, v1.digest],
        after: [afterStranger.version, afterStranger.digest],
      }),
      check(
        "the holder's late reports are answered 409 (kept as a claim)",
        holderAnswers.every((x) => x === 409),
        holderAnswers,
      ),
      check("the next receipt lists exactly one claim, from the holder", claims.length === 1 && claims[0]!.operation_id === op, claims),
      check(
        "the outcome stays unknown: a claim is not a settlement, and no person's reconciliation was closed",
        s?.settledState === "unknown" && v2.decision === "stop_incomplete" && effects?.reconciled_by_person === 0,
        { settlement: s?.settledState, decision: v2.decision, effects },
      ),
      ...(await dbCheck(
        ctx,
        (db) => db.claimCount(op),
        "db: one claim row for three identical reports",
        (n) => n === 1,
      )),
    ];
    const strangerRefused = forged === 403 && observed === 403 && afterStranger.digest === v1.digest;
    return {
      observed: strangerRefused && s?.settledState === "unknown" && claims.length === 1 ? "nothing_changed" : "evidence_changed",
      checks,
      evidence: links(ctx, { runId: run.runId, barrierId }),
      facts: { forged, observed, holderAnswers, claims, settlement: s },
    };
  },
});
