// Claims (docs/architecture.md#the-cancellation-barrier): an engine works on a barrier only while it holds
// an expiring claim on its row (FOR UPDATE SKIP LOCKED), so any number of engines may run and a crashed
// one's barriers are taken over once its claims expire.
import "server-only";
import { prisma } from "../../../platform/db/prisma";
import type { Principal } from "../../../platform/auth/principal";
import { PENDING_OWN_SQL, system } from "./shared";

export interface Claimed {
  id: string;
  phase: string;
}

/** Up to `limit` claimable barriers at once (oldest first), claimed for this worker. */
export async function claimBarriers(
  p: Principal,
  workerId: string,
  claimMs: number,
  exclude: string[],
  teamId: string | null,
  limit: number,
): Promise<Claimed[]> {
  system(p);
  return prisma().$queryRawUnsafe<Claimed[]>(
    `UPDATE barriers b SET claimed_by = $1, claim_expires_at = clock_timestamp() + make_interval(secs => $2::double precision / 1000)
      WHERE b.id IN (
        SELECT id FROM barriers
         WHERE phase <> 'complete'
           AND (claim_expires_at IS NULL OR claim_expires_at < clock_timestamp())
           AND NOT (phase = 'quiet' AND quiet_until > clock_timestamp())
           AND NOT (id = ANY ($3::text[]))
           AND ($4::text IS NULL OR team_id = $4)
         ORDER BY requested_at
         LIMIT $5
         FOR UPDATE SKIP LOCKED)
      RETURNING b.id, b.phase::text AS phase`,
    workerId,
    claimMs,
    exclude,
    teamId,
    limit,
  );
}

/**
 * Renews this worker's claims; returns the barriers still claimed by it. A step's own transaction holds
 * some of these rows locked (FOR UPDATE) until it commits: those are skipped, not waited for — a renewal
 * waiting on them held a pooled connection for the whole step, one more every renewal period, until the
 * pool ran dry. A skipped row still claimed by this worker counts as held (the next renewal extends it);
 * every step is conditional on the claim either way.
 */
export async function renewClaims(p: Principal, barrierIds: string[], workerId: string, claimMs: number): Promise<string[]> {
  system(p);
  const rows = await prisma().$queryRawUnsafe<{ id: string }[]>(
    `WITH renewed AS (
       UPDATE barriers SET claim_expires_at = clock_timestamp() + make_interval(secs => $3::double precision / 1000)
        WHERE id IN (SELECT id FROM barriers WHERE id = ANY ($1::text[]) AND claimed_by = $2 AND phase <> 'complete' FOR UPDATE SKIP LOCKED)
       RETURNING id)
     SELECT id FROM renewed
      UNION
     SELECT id FROM barriers WHERE id = ANY ($1::text[]) AND claimed_by = $2 AND phase <> 'complete'`,
    barrierIds,
    workerId,
    claimMs,
  );
  return rows.map((r) => r.id);
}

export async function releaseClaims(p: Principal, barrierIds: string[], workerId: string): Promise<void> {
  system(p);
  if (barrierIds.length === 0) return;
  await prisma().$executeRawUnsafe(
    `UPDATE barriers SET claimed_by = NULL, claim_expires_at = NULL WHERE id = ANY ($1::text[]) AND claimed_by = $2`,
    barrierIds,
    workerId,
  );
}

/** When the engine must look again without a notification: a quiet period ends or a claim expires. */
export async function nextWakeAt(p: Principal, teamId: string | null = null): Promise<Date | null> {
  system(p);
  const rows = await prisma().$queryRawUnsafe<{ at: Date | null }[]>(
    `SELECT min(CASE WHEN phase = 'quiet' AND (claim_expires_at IS NULL OR claim_expires_at < quiet_until) THEN quiet_until
                     ELSE claim_expires_at END) AS at
       FROM barriers WHERE phase <> 'complete' AND ($1::text IS NULL OR team_id = $1)`,
    teamId,
  );
  return rows[0]?.at ?? null;
}

export interface ClaimedState {
  id: string;
  phase: string;
  rootRunId: string;
  quietUntil: Date | null;
  /** Own settlements not settled yet (work for the provider conversation, one barrier at a time). */
  pending: number;
}

/** The claimed barriers' state, one statement. */
export async function loadClaimedState(p: Principal, barrierIds: string[], workerId: string): Promise<ClaimedState[]> {
  system(p);
  const rows = await prisma().$queryRawUnsafe<
    { id: string; phase: string; root_run_id: string; quiet_until: Date | null; pending: number }[]
  >(
    `SELECT b.id, b.phase::text AS phase, r.root_run_id, b.quiet_until,
            ${PENDING_OWN_SQL} AS pending
       FROM barriers b JOIN runs r ON r.id = b.run_id
      WHERE b.id = ANY ($1::text[]) AND b.claimed_by = $2 AND b.phase <> 'complete'`,
    barrierIds,
    workerId,
  );
  return rows.map((r) => ({ id: r.id, phase: r.phase, rootRunId: r.root_run_id, quietUntil: r.quiet_until, pending: r.pending }));
}
