// Seed 000's approved-artifact handoff fixture: "simulates transport loss after the side effect. It
// records an explicit uncertain outcome, then reconciles through an executor-side receipt before
// allowing a retry to resolve as already applied." Bounded duplicate prevention for a local file write.
import { readFile } from "node:fs/promises";
import path from "node:path";
import { check, dbCheck, drillCase, links, newRun, registerWork } from "../support";

export const approvedArtifactHandoff = drillCase("approved_artifact_handoff", "000", "uncertain_then_already_applied", {
  summary:
    "the artifact is written, then the completion report is lost in transport: the executor records 'uncertain'; the redelivered job reconciles from the executor-side receipt instead of writing again, and any later delivery resolves as already_applied",
  async run(ctx, { worker: first, pod: second }) {
    const run = await newRun(ctx, { title: "approved artifact handoff" });
    const stamp = await registerWork(ctx, run, "handoff", "artifact.handoff");
    const journalDir = path.join(ctx.scratchDir, `receipts-${stamp.operationId}`);
    const file = path.join(ctx.scratchDir, `artifact-${stamp.operationId}.txt`);
    const job = { kind: "artifact" as const, file };

    const lost = await first.run(stamp, job, { journalDir, loseComplete: "before_server" }).outcome;
    const receiptFile = path.join(journalDir, `${encodeURIComponent(stamp.operationId)}.json`);
    const executorReceipt = JSON.parse(await readFile(receiptFile, "utf8").catch(() => "null")) as {
      state?: string;
      uncertain?: { cause: string };
    } | null;
    const opMid = ctx.db ? await ctx.db.operation(stamp.operationId) : null;
    // The queue redelivers the same operation, to another process sharing the executor's receipts.
    const retry = await second.run(stamp, job, { journalDir }).outcome;
    const later = await first.run(stamp, job, { journalDir }).outcome;
    const lines = (await readFile(file, "utf8").catch(() => "")).split("\n").filter(Boolean).length;
    const checks = [
      check(
        "the first delivery wrote the artifact and ended uncertain (transport_lost)",
        lost.status === "uncertain" && lost.cause === "transport_lost",
        lost,
      ),
      check(
        "the executor-side receipt records the uncertain interval",
        executorReceipt?.state === "uncertain" && executorReceipt.uncertain?.cause === "transport_lost",
        executorReceipt,
      ),
      check(
        "the redelivery reconciled from the executor receipt without running",
        retry.status === "already_applied" && retry.reconciled === true && !retry.handlerStarted,
        retry,
      ),
      check(
        "a later delivery is answered already_applied by the gate (succeeded)",
        later.status === "already_applied" && later.recordedState === "succeeded" && !later.handlerStarted,
        later,
      ),
      check("the artifact was written exactly once", lines === 1, { lines }),
    ];
    if (ctx.db)
      checks.push(
        check("db: while uncertain, the control plane still had the operation running", opMid?.state === "running", opMid?.state),
      );
    checks.push(
      ...(await dbCheck(
        ctx,
        (db) => db.operation(stamp.operationId),
        "db: now succeeded, one effect receipt, reconciled from the executor receipt",
        (op) =>
          op?.state === "succeeded" &&
          op.effectReceipts === 1 &&
          (op.outcomeDetail as { reconciledFrom?: string } | null)?.reconciledFrom === "executor_receipt",
      )),
    );
    const ok = lost.status === "uncertain" && retry.status === "already_applied" && later.status === "already_applied" && lines === 1;
    return {
      observed: ok ? "uncertain_then_already_applied" : `${lost.status}/${retry.status}/${later.status}/writes=${lines}`,
      checks,
      evidence: links(ctx, { runId: run.runId }),
      facts: { operationId: stamp.operationId, artifact: file, executorReceipt: receiptFile, first: first.label, redelivery: second.label },
    };
  },
});
