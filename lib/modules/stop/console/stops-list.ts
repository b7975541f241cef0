// The Stops section's read (docs/fleet-stop.md#stops-in-the-console): every single kill, fleet pause and fleet kill of the
// team, newest first, with who asked (name and e-mail), why, the filter in words, progress and the
// receipt. A single kill is a barrier no fleet stop started. Counts of open unknowns use the same
// statuses as the navigation badge, so the two never disagree.
import "server-only";
import { prisma } from "../../../platform/db/prisma";
import { authorize } from "../../../platform/auth/authorize";
import type { Principal } from "../../../platform/auth/principal";
import { consoleTeam } from "../../../platform/auth/console-team";
import { OPEN_RECONCILIATION_STATUSES } from "../../../control/reconciliation";
import { stopFilterWords, type StopFilterLike } from "../../../control/stop-words";
import { peopleOfTeam, type Person } from "../../members/console/people";

export interface StopListItem {
  kind: "kill" | "fleet_pause" | "fleet_kill";
  id: string;
  /** the console page of this stop: the barrier for a single kill, the fleet stop's page otherwise */
  href: string;
  at: string;
  by: Person;
  reason: string;
  /** what it covers, in words ("run run_…" for a single kill) */
  covers: string;
  runId: string | null;
  progress: { targets: number; started: number; complete: number; unknownsOpen: number };
  /** the receipt's decision, once issued; `receiptHref` the page that shows it */
  decision: "stopped_and_quiet" | "stop_incomplete" | null;
  receiptHref: string | null;
  /** a pause scope: whether it still holds the matching runs */
  liftedAt: string | null;
}

interface Row {
  kind: StopListItem["kind"];
  id: string;
  at: Date;
  requested_by: string;
  reason: string;
  filter: StopFilterLike | null;
  run_id: string | null;
  lifted_at: Date | null;
  decision: StopListItem["decision"];
}

export const STOPS_PAGE = 100;

export async function listConsoleStops(p: Principal): Promise<StopListItem[]> {
  authorize(p, "run.read");
  const teamId = consoleTeam(p);
  const db = prisma();
  const rows = await db.$queryRawUnsafe<Row[]>(
    `SELECT * FROM (
       SELECT ('fleet_' || s.action::text) AS kind, s.id, s.created_at AS at, s.requested_by, s.reason, s.filter,
              NULL::text AS run_id, s.lifted_at, s.decision::text AS decision
         FROM stop_scopes s WHERE s.team_id = $1
       UNION ALL
       SELECT 'kill', b.id, b.requested_at, b.requested_by, b.reason, NULL, b.run_id, NULL, b.decision::text
         FROM barriers b
        WHERE b.team_id = $1 AND NOT EXISTS (SELECT 1 FROM stop_scope_targets t WHERE t.barrier_id = b.id)
     ) i ORDER BY at DESC, id DESC LIMIT ${STOPS_PAGE}`,
    teamId,
  );
  const scopeIds = rows.filter((r) => r.kind !== "kill").map((r) => r.id);
  const killIds = rows.filter((r) => r.kind === "kill").map((r) => r.id);
  const open = [...OPEN_RECONCILIATION_STATUSES];
  const [fleet, kills, people] = await Promise.all([
    scopeIds.length
      ? db.$queryRawUnsafe<{ id: string; targets: number; started: number; complete: number; unknowns: number }[]>(
          `SELECT t.scope_id AS id, count(*)::int AS targets, count(t.barrier_id)::int AS started,
                  count(*) FILTER (WHERE b.phase = 'complete')::int AS complete,
                  (SELECT count(DISTINCT rc.id) FROM reconciliations rc JOIN settlements st ON st.id = rc.settlement_id
                     JOIN stop_scope_targets t2 ON t2.barrier_id = st.barrier_id
                    WHERE t2.scope_id = t.scope_id AND rc.status::text = ANY ($2::text[]))::int AS unknowns
             FROM stop_scope_targets t LEFT JOIN barriers b ON b.id = t.barrier_id
            WHERE t.scope_id = ANY ($1::text[]) GROUP BY t.scope_id`,
          scopeIds,
          open,
        )
      : [],
    killIds.length
      ? db.$queryRawUnsafe<{ id: string; complete: boolean; unknowns: number }[]>(
          `SELECT b.id, b.phase = 'complete' AS complete,
                  (SELECT count(DISTINCT rc.id) FROM reconciliations rc JOIN settlements st ON st.id = rc.settlement_id
                    WHERE st.barrier_id = b.id AND rc.status::text = ANY ($2::text[]))::int AS unknowns
             FROM barriers b WHERE b.id = ANY ($1::text[])`,
          killIds,
          open,
        )
      : [],
    peopleOfTeam(
      teamId,
      rows.map((r) => r.requested_by),
    ),
  ]);
  const fleetBy = new Map(fleet.map((f) => [f.id, f]));
  const killBy = new Map(kills.map((k) => [k.id, k]));
  return rows.map((r) => {
    const by = people.get(r.requested_by)!;
    if (r.kind === "kill") {
      const k = killBy.get(r.id);
      return {
        kind: r.kind,
        id: r.id,
        href: `/barriers/${r.id}`,
        at: r.at.toISOString(),
        by,
        reason: r.reason,
        covers: `run ${r.run_id} and what it delegated`,
        runId: r.run_id,
        progress: { targets: 1, started: 1, complete: k?.complete ? 1 : 0, unknownsOpen: k?.unknowns ?? 0 },
        decision: r.decision,
        receiptHref: r.decision ? `/receipts/${r.id}` : null,
        liftedAt: null,
      };
    }
    const f = fleetBy.get(r.id);
    return {
      kind: r.kind,
      id: r.id,
      href: `/stops/${r.id}`,
      at: r.at.toISOString(),
      by,
      reason: r.reason,
      covers: stopFilterWords(r.filter ?? {}),
      runId: null,
      progress: { targets: f?.targets ?? 0, started: f?.started ?? 0, complete: f?.complete ?? 0, unknownsOpen: f?.unknowns ?? 0 },
      decision: r.decision,
      receiptHref: r.kind === "fleet_kill" && r.decision ? `/stops/${r.id}#fleet-receipt` : null,
      liftedAt: r.lifted_at?.toISOString() ?? null,
    };
  });
}
