// GET /api/v1/runs/{runId}/control: what stops a run now — its own and its ancestors' lifecycles and the
// live fleet stop scopes that apply to it (docs/fleet-stop.md) — for a supervisor that must freeze or
// empty the run's process tree (docs/environment.md#pause-resume-kill). The rule is the gate's own
// (lib/control/fleet.ts scopeAuthority, through runControl); the scopes are read from the columns
// quiesce_scope_matches reads, so this answers what the gate decides.
import "server-only";
import { prisma } from "../../platform/db/prisma";
import { notFound } from "../../platform/errors";
import { assertTeam, authorize } from "../../platform/auth/authorize";
import type { Principal } from "../../platform/auth/principal";
import { runControl, type RunStatus, type ScopeRunFacts, type StopAction, type StopFilter } from "../../control/fleet";
import type { Harness, Lifecycle } from "../../control/types";
import type { RunControlView } from "../../schemas/runs";

type ChainRow = {
  id: string;
  team_id: string;
  harness: Harness;
  native_agent_id: string | null;
  created_by: string | null;
  task_id: string;
  created_at: Date;
  lifecycle: Lifecycle;
  finished_at: Date | null;
};

type ScopeRow = {
  id: string;
  action: StopAction;
  f_harness: Harness[] | null;
  f_agent: string[] | null;
  f_task_prefix: string | null;
  f_created_after: Date | null;
  f_created_before: Date | null;
  f_status: RunStatus[] | null;
  f_run_ids: string[] | null;
};

function filterOf(s: ScopeRow): StopFilter {
  const f: StopFilter = {};
  if (s.f_harness) f.harness = s.f_harness;
  if (s.f_agent) f.agent = s.f_agent;
  if (s.f_task_prefix !== null) f.taskPrefix = s.f_task_prefix;
  if (s.f_created_after) f.createdAfter = s.f_created_after.getTime();
  if (s.f_created_before) f.createdBefore = s.f_created_before.getTime();
  if (s.f_status) f.status = s.f_status;
  if (s.f_run_ids) f.runIds = s.f_run_ids;
  return f;
}

export async function getRunControl(p: Principal, runId: string): Promise<RunControlView> {
  authorize(p, "run.read");
  // The run's path ends with the run itself: the chain root first, as the gate reads it.
  const chain = await prisma().$queryRawUnsafe<ChainRow[]>(
    `SELECT a.id, a.team_id, a.harness::text AS harness, a.native_agent_id, a.created_by, a.task_id, a.created_at,
            a.lifecycle::text AS lifecycle, a.finished_at
       FROM runs r JOIN runs a ON a.id = ANY (r.path) AND a.team_id = r.team_id
      WHERE r.id = $1 ORDER BY array_position(r.path, a.id)`,
    runId,
  );
  const run = chain[chain.length - 1];
  if (!run || run.id !== runId) throw notFound("run");
  assertTeam(p, run.team_id, "run");
  const scopes = await prisma().$queryRawUnsafe<ScopeRow[]>(
    `SELECT id, action::text AS action, f_harness::text[] AS f_harness, f_agent, f_task_prefix, f_created_after, f_created_before,
            f_status::text[] AS f_status, f_run_ids
       FROM stop_scopes WHERE team_id = $1 AND lifted_at IS NULL ORDER BY created_at, id`,
    run.team_id,
  );
  const facts: ScopeRunFacts[] = chain.map((r) => ({
    runId: r.id,
    harness: r.harness,
    nativeAgentId: r.native_agent_id,
    createdBy: r.created_by,
    taskId: r.task_id,
    createdAt: r.created_at.getTime(),
    lifecycle: r.lifecycle,
    finishedAt: r.finished_at?.getTime() ?? null,
  }));
  const c = runControl(
    scopes.map((s) => ({ id: s.id, action: s.action, filter: filterOf(s) })),
    facts,
  );
  return { runId, control: c.control, lifecycle: c.lifecycle, stopIds: c.stopIds };
}
