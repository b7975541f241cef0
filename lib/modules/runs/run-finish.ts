// Run completion (docs/fleet-stop.md#run-completion): the harness says a run ended (Claude Code
// SessionEnd, the end of a Codex thread, the SDK's finish). The run and its subtree get finished_at;
// their status is then `finished` and the gate denies them `finished`: finishing ends authority. Only
// the run's holder may finish it (docs/security/authorization.md#holders), and not while work of the subtree is
// queued or running — unless it says `abandon`: queued work is cancelled (kept, never started) and
// running calls become unknown outcomes for a person, as a barrier that cannot ask anyone would leave them.
import "server-only";
import { prisma } from "../../platform/db/prisma";
import { notFound, QuiesceError } from "../../platform/errors";
import type { FinishRunBody, FinishRunResponse } from "../../schemas/stops";
import { authorize, assertTeam } from "../../platform/auth/authorize";
import { notifyControl } from "../../platform/db/notify";
import { assertHolder } from "./holder";
import { lockRunTreeExclusive } from "../../platform/db/locks";
import { settleTx } from "../stop/settlements";
import { appendAudit } from "../audit/audit";
import { actorOf, type Principal } from "../../platform/auth/principal";

export async function finishRun(p: Principal, runId: string, body: FinishRunBody = {}): Promise<FinishRunResponse> {
  authorize(p, "operation.report");
  const run = await prisma().run.findUnique({ where: { id: runId }, select: { teamId: true, rootRunId: true, path: true } });
  if (!run) throw notFound("run");
  assertTeam(p, run.teamId, "run");
  await assertHolder(prisma(), p, { teamId: run.teamId, path: run.path }, body.leaseId, "finish it");
  return prisma().$transaction(async (tx) => {
    // Exclusive: no gate call or registration of the tree starts new work between the check and the write.
    await lockRunTreeExclusive(tx, run.rootRunId);
    const open = await tx.$queryRawUnsafe<{ id: string; operation_id: string; state: string }[]>(
      `SELECT o.id, o.operation_id, o.state::text AS state FROM runs c JOIN operations o ON o.run_id = c.id
        WHERE c.root_run_id = $1 AND $2 = ANY (c.path) AND c.team_id = $3 AND o.state IN ('queued', 'scheduled', 'running')
        ORDER BY o.created_at, o.id`,
      run.rootRunId,
      runId,
      run.teamId,
    );
    if (open.length > 0 && body.abandon !== true) {
      const running = open.filter((o) => o.state === "running").length;
      throw new QuiesceError(
        "conflict",
        `run has work in progress (${running} running, ${open.length - running} queued or scheduled): settle it first, or finish with abandon`,
        { operations: open.slice(0, 20).map((o) => ({ operationId: o.operation_id, state: o.state })) },
      );
    }
    const at = new Date();
    for (const o of open) {
      if (o.state === "running") {
        // Nobody can say whether the call's effect happened: an unknown outcome, with its reconciliation.
        await settleTx(tx, {
          settlementId: null,
          operationRowId: o.id,
          teamId: run.teamId,
          state: "unknown",
          cause: "executor_aborted",
          at,
          onlyIfPending: true,
          reason: `unknown: abandoned when ${actorOf(p)} finished the run`,
        });
      } else {
        await tx.operation.updateMany({
          where: { id: o.id, state: { in: ["queued", "scheduled"] } },
          data: { state: "cancelled_not_started", stateReason: "finished", finishedAt: at },
        });
      }
    }
    if (open.length > 0)
      await appendAudit(tx, {
        teamId: run.teamId,
        actor: actorOf(p),
        action: "run.finish_abandon",
        target: runId,
        after: { operations: open.map((o) => ({ operationId: o.operation_id, state: o.state })) },
      });
    const rows = await tx.$queryRawUnsafe<{ id: string }[]>(
      `UPDATE runs SET finished_at = clock_timestamp()
        WHERE root_run_id = $1 AND $2 = ANY (path) AND team_id = $3 AND finished_at IS NULL RETURNING id`,
      run.rootRunId,
      runId,
      run.teamId,
    );
    if (rows.length > 0)
      await notifyControl(tx, { kind: "run", teamId: run.teamId, rootRunId: run.rootRunId, runIds: rows.map((r) => r.id) });
    const self = await tx.run.findUniqueOrThrow({ where: { id: runId }, select: { finishedAt: true } });
    return { runId, finishedAt: self.finishedAt!.toISOString(), finished: rows.length, abandoned: open.length };
  });
}
