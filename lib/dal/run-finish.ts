// Run completion (docs/fleet-stop.md#run-completion): the harness says a run ended (Claude Code
// SessionEnd, the end of a Codex thread, the SDK's finish). The run and its subtree get finished_at;
// their status is then `finished`, and a fleet stop starts no barrier for them. Completion is not a
// control write: it grants nothing and a killed run stays killed.
import "server-only";
import { prisma } from "../db/prisma";
import { notFound } from "../errors";
import type { FinishRunResponse } from "../schemas/stops";
import { authorize, assertTeam } from "./authorize";
import { notifyControl } from "./internal/notify";
import type { Principal } from "./principal";

export async function finishRun(p: Principal, runId: string): Promise<FinishRunResponse> {
  authorize(p, "operation.report");
  const run = await prisma().run.findUnique({ where: { id: runId }, select: { teamId: true, rootRunId: true } });
  if (!run) throw notFound("run");
  assertTeam(p, run.teamId, "run");
  return prisma().$transaction(async (tx) => {
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
    return { runId, finishedAt: self.finishedAt!.toISOString(), finished: rows.length };
  });
}
