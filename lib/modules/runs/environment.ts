// The run's environment (docs/environment.md, docs/evidence.md#the-environment): `quiesce exec` marks
// its run supervised before the command starts, then reports what it holds (container, live processes,
// frozen). Only the run's holder may: the key that registered it, or a caller presenting one of its
// leases. The marker is written once, and never on a killed run (a kill that commits first wins: the
// command is then never started), so a receipt never waits for a supervisor that never ran.
import "server-only";
import { prisma } from "../../platform/db/prisma";
import { notFound, QuiesceError } from "../../platform/errors";
import { authorize, assertTeam } from "../../platform/auth/authorize";
import { actorOf, type Principal } from "../../platform/auth/principal";
import { appendAudit } from "../audit/audit";
import { notifyControl } from "../../platform/db/notify";
import { assertHolder } from "./holder";
import type { EnvironmentReportBody } from "../../schemas/runs";

export interface RunEnvironmentView {
  runId: string;
  supervised: true;
  mechanism: string;
  weakest: boolean;
  graceMs: number;
  supervisedAt: string;
  container: string | null;
  liveProcesses: number | null;
  frozen: boolean;
  statusAt: string | null;
}

type Row = {
  run_id: string;
  mechanism: string;
  weakest: boolean;
  grace_ms: number;
  supervised_at: Date;
  container: string | null;
  live_processes: number | null;
  frozen: boolean;
  status_at: Date | null;
};

const view = (r: Row): RunEnvironmentView => ({
  runId: r.run_id,
  supervised: true,
  mechanism: r.mechanism,
  weakest: r.weakest,
  graceMs: r.grace_ms,
  supervisedAt: r.supervised_at.toISOString(),
  container: r.container,
  liveProcesses: r.live_processes,
  frozen: r.frozen,
  statusAt: r.status_at?.toISOString() ?? null,
});

/**
 * POST /api/v1/runs/{runId}/environment: the first report marks the run supervised (409 on a killed run);
 * later ones update its live status. The mechanism a run was marked with never changes.
 */
export async function reportEnvironment(p: Principal, runId: string, input: EnvironmentReportBody): Promise<RunEnvironmentView> {
  authorize(p, "operation.report");
  const run = await prisma().run.findUnique({ where: { id: runId }, select: { teamId: true, rootRunId: true, path: true } });
  if (!run) throw notFound("run");
  assertTeam(p, run.teamId, "run");
  await assertHolder(prisma(), p, { teamId: run.teamId, path: run.path }, input.leaseId, "report its environment");
  return prisma().$transaction(async (tx) => {
    // The run row's lock orders this against a kill (which writes the row): either the kill sees the marker
    // and its receipt waits for the supervisor, or the marker sees the kill and is refused.
    const [cur] = await tx.$queryRawUnsafe<{ lifecycle: string }[]>(
      `SELECT lifecycle::text AS lifecycle FROM runs WHERE id = $1 FOR UPDATE`,
      runId,
    );
    const status = {
      container: input.container ?? null,
      live: input.liveProcesses ?? null,
      frozen: input.frozen ?? false,
    };
    const [existing] = await tx.$queryRawUnsafe<Row[]>(`SELECT * FROM run_environments WHERE run_id = $1`, runId);
    let row: Row;
    if (!existing) {
      if (cur?.lifecycle === "killed") throw new QuiesceError("conflict", "the run is killed: too late to start it under a supervisor");
      [row] = (await tx.$queryRawUnsafe<Row[]>(
        `INSERT INTO run_environments (run_id, team_id, mechanism, weakest, grace_ms, supervised_by, container, live_processes, frozen, status_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, now()) RETURNING *`,
        runId,
        run.teamId,
        input.mechanism,
        input.mechanism === "pgroup",
        input.graceMs,
        actorOf(p),
        status.container,
        status.live,
        status.frozen,
      )) as [Row];
      await appendAudit(tx, {
        teamId: run.teamId,
        actor: actorOf(p),
        action: "run.supervised",
        target: runId,
        after: { mechanism: input.mechanism, grace_ms: input.graceMs, container: status.container },
      });
    } else {
      if (existing.mechanism !== input.mechanism)
        throw new QuiesceError("conflict", `the run is supervised by ${existing.mechanism}, not ${input.mechanism}`);
      [row] = (await tx.$queryRawUnsafe<Row[]>(
        `UPDATE run_environments SET container = coalesce($2, container), live_processes = $3, frozen = $4, status_at = now()
          WHERE run_id = $1 RETURNING *`,
        runId,
        status.container,
        status.live,
        status.frozen,
      )) as [Row];
    }
    await notifyControl(tx, { kind: "run", teamId: run.teamId, rootRunId: run.rootRunId, runIds: [runId] });
    return view(row);
  });
}
