// Pause reclaim: a pause holds reservations (leases, queued work), so a team may say how long a pause
// may last (teams.pause_policy_seconds; NULL = off, the default). The barrier engine calls this on
// every wake: a run paused longer than its team's policy is killed as the system, with the reason and
// an audit row saying why, through the ordinary kill transaction (so the stop gets its own barrier,
// ladder and receipt). System principals only.
import "server-only";
import { prisma } from "../../platform/db/prisma";
import { forbidden } from "../../platform/errors";
import type { Principal } from "../../platform/auth/principal";
import { appendAudit } from "../audit/audit";
import { killRun } from "../stop/kill";

export interface Reclaimed {
  runId: string;
  barrierId: string;
  pausedSince: Date;
  policySeconds: number;
}

/** Runs paused past their team's policy, topmost first (killing a run also kills its subtree). */
export async function reclaimOverduePauses(p: Principal, teamId: string | null = null, now = new Date()): Promise<Reclaimed[]> {
  if (p.type !== "system") throw forbidden("pause reclaim is run by the barrier engine");
  const due = await prisma().$queryRawUnsafe<{ id: string; team_id: string; since: Date; policy: number; action: string }[]>(
    `SELECT r.id, r.team_id, r.lifecycle_changed_at AS since, t.pause_policy_seconds AS policy, t.pause_reclaim_action AS action
       FROM runs r JOIN teams t ON t.id = r.team_id
      WHERE r.lifecycle = 'paused' AND t.pause_policy_seconds IS NOT NULL
        AND r.lifecycle_changed_at + make_interval(secs => t.pause_policy_seconds) <= $1
        AND ($2::text IS NULL OR r.team_id = $2)
      ORDER BY r.depth, r.lifecycle_changed_at LIMIT 50`,
    now,
    teamId,
  );
  const out: Reclaimed[] = [];
  for (const r of due) {
    if (r.action !== "kill") continue; // the only reclaim action there is
    const still = await prisma().run.findUnique({ where: { id: r.id }, select: { lifecycle: true, lifecycleChangedAt: true } });
    if (still?.lifecycle !== "paused" || still.lifecycleChangedAt.getTime() !== r.since.getTime()) continue; // resumed or killed meanwhile
    const reason = `pause reclaim: paused since ${r.since.toISOString()}, longer than the team's ${r.policy} s pause policy`;
    const killed = await killRun({ type: "system", name: "pause-reclaim" }, r.id, reason);
    await prisma().$transaction((tx) =>
      appendAudit(tx, {
        teamId: r.team_id,
        actor: "system:pause-reclaim",
        action: "run.pause_reclaimed",
        target: r.id,
        before: { lifecycle: "paused", since: r.since.toISOString() },
        after: { lifecycle: "killed", barrierId: killed.barrierId, policySeconds: r.policy, reason },
      }),
    );
    out.push({ runId: r.id, barrierId: killed.barrierId, pausedSince: r.since, policySeconds: r.policy });
  }
  return out;
}

/** When the next pause falls due (for the engine's sleep), or null when no team reclaims pauses. */
export async function nextPauseReclaimAt(p: Principal, teamId: string | null = null): Promise<Date | null> {
  if (p.type !== "system") throw forbidden("system only");
  const rows = await prisma().$queryRawUnsafe<{ at: Date | null }[]>(
    `SELECT min(r.lifecycle_changed_at + make_interval(secs => t.pause_policy_seconds)) AS at
       FROM runs r JOIN teams t ON t.id = r.team_id
      WHERE r.lifecycle = 'paused' AND t.pause_policy_seconds IS NOT NULL AND ($1::text IS NULL OR r.team_id = $1)`,
    teamId,
  );
  return rows[0]?.at ?? null;
}
