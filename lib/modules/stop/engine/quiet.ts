// settling → quiet (docs/architecture.md#the-cancellation-barrier): every settlement under the run
// settled, the quiet period starts.
import "server-only";
import { prisma, type Tx } from "../../../platform/db/prisma";
import type { Principal } from "../../../platform/auth/principal";
import { quietPeriodFor, quietUntil } from "../../../control/barrier";
import { supervisedQuietSeconds } from "../../../control/evidence/environment";
import { notifyControlMany, type ControlEvent } from "../../../platform/db/notify";
import { lockBarriersTx } from "../internal/receipts";
import { IN_FLIGHT_SQL, PENDING_OWN_SQL, SUBTREE_SQL, system } from "./shared";

export type QuietOutcome = { quietUntil: Date } | "pending" | "subtree" | "lost";

/**
 * All settled → quiet. The completion rule covers the whole subtree: while any operation under the
 * barrier's run is still in flight (even one an earlier barrier of a child is settling), it stays in
 * `settling` ("subtree"). The quiet period is the team's (never 0 unless the team says so) or the
 * longest of the providers touched, whichever is longer. One transaction for all of `barrierIds` (oldest
 * first, the order every barrier-row locker uses); the outcome of each, in the order given.
 */
export async function enterQuiet(p: Principal, barrierIds: string[], workerId: string): Promise<Map<string, QuietOutcome>> {
  system(p);
  return prisma().$transaction((tx) => enterQuietTx(tx, barrierIds, workerId), { timeout: 120_000 });
}

/**
 * Set-based (docs/fleet-stop.md#at-scale): the rows locked in one statement (oldest first), every
 * barrier's conditions and quiet-period inputs read in one, the quiet ones written in one and notified
 * in one. Per barrier: not settling or not ours → "lost"; an own settlement open → "pending"; anything under the run
 * in flight → "subtree"; else quiet for the longer of the team's period and the providers touched
 * (settled or cancelled before starting), quiesced at the last settlement under the run.
 */
async function enterQuietTx(tx: Tx, barrierIds: string[], workerId: string): Promise<Map<string, QuietOutcome>> {
  await lockBarriersTx(tx, barrierIds);
  const rows = await tx.$queryRawUnsafe<
    {
      id: string;
      team_id: string;
      root_run_id: string;
      phase: string;
      claimed_by: string | null;
      dispatch_stopped_at: Date | null;
      last_settled_at: Date | null;
      team_quiet_ms: number;
      pending_own: number;
      in_flight: number;
      providers: { name: string; q: number | null }[];
      last_settled: Date | null;
      late: number;
      supervised_grace_ms: number | null;
    }[]
  >(
    `SELECT b.id, b.team_id, r.root_run_id, b.phase::text AS phase, b.claimed_by, b.dispatch_stopped_at, b.last_settled_at,
            (SELECT max(e.grace_ms) FROM run_environments e WHERE e.run_id = ANY (sub.ids))::int AS supervised_grace_ms,
            t.quiet_period_ms AS team_quiet_ms, ${PENDING_OWN_SQL} AS pending_own, ${IN_FLIGHT_SQL} AS in_flight,
            (SELECT coalesce(jsonb_agg(jsonb_build_object('name', n.name, 'q', p.quiet_period_seconds) ORDER BY n.name), '[]'::jsonb)
               FROM (SELECT DISTINCT o.provider_name AS name FROM operations o
                      WHERE o.provider_name IS NOT NULL AND o.run_id = ANY (sub.ids)
                        AND (o.id IN (SELECT operation_id FROM settlements) OR o.state = 'cancelled_not_started')) n
               LEFT JOIN providers p ON p.team_id = b.team_id AND p.name = n.name) AS providers,
            (SELECT max(st.settled_at) FROM settlements st JOIN operations o ON o.id = st.operation_id WHERE o.run_id = ANY (sub.ids)) AS last_settled,
            (SELECT count(*) FROM gate_decisions g
              WHERE g.team_id = b.team_id AND g.run_id = ANY (sub.ids) AND g.at >= b.requested_at AND g.decision = 'deny')::int AS late
       FROM barriers b JOIN runs r ON r.id = b.run_id JOIN teams t ON t.id = b.team_id ${SUBTREE_SQL}
      WHERE b.id = ANY ($1::text[])`,
    barrierIds,
  );
  const byId = new Map(rows.map((r) => [r.id, r]));
  const now = new Date();
  const out = new Map<string, QuietOutcome>();
  const quiet: Record<string, unknown>[] = [];
  const notices: ControlEvent[] = [];
  for (const id of barrierIds) {
    const b = byId.get(id);
    if (!b) throw new Error(`barrier not found: ${id}`);
    if (b.phase !== "settling" || b.claimed_by !== workerId) out.set(id, "lost");
    else if (b.pending_own > 0) out.set(id, "pending");
    else if (b.in_flight > 0) out.set(id, "subtree");
    else {
      const q = quietPeriodFor(
        b.providers.map((p) => ({ name: p.name, quietPeriodSeconds: p.q })),
        // Supervised runs' reports are waited for too (docs/evidence.md#the-environment).
        Math.max(b.team_quiet_ms / 1000, supervisedQuietSeconds(b.supervised_grace_ms)),
      );
      const until = quietUntil(now, q);
      quiet.push({
        id,
        q,
        until: until.toISOString(),
        quiesced_at: (b.last_settled ?? b.dispatch_stopped_at ?? now).toISOString(),
        last_settled_at: (b.last_settled ?? b.last_settled_at)?.toISOString() ?? null,
        late: b.late,
      });
      notices.push({ kind: "barrier", teamId: b.team_id, rootRunId: b.root_run_id, barrierId: id });
      out.set(id, { quietUntil: until });
    }
  }
  if (quiet.length > 0) {
    await tx.$executeRawUnsafe(
      `UPDATE barriers b SET phase = 'quiet', quiet_period_seconds = u.q, quiet_until = u.until, quiesced_at = u.quiesced_at,
              last_settled_at = u.last_settled_at, late_requests_denied = u.late
         FROM jsonb_to_recordset($1::jsonb) AS u(id text, q double precision, until timestamptz, quiesced_at timestamptz,
              last_settled_at timestamptz, late int)
        WHERE b.id = u.id`,
      JSON.stringify(quiet),
    );
    await notifyControlMany(tx, notices);
  }
  return out;
}
