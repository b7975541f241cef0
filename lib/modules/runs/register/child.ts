import "server-only";
import { pool, preparedName } from "../../../platform/db/pool";
import { QuiesceError, badRequest, notFound } from "../../../platform/errors";
import { DEFAULT_LEASE_MAX_LIFETIME_SECONDS, deriveChildLease } from "../../../control/lease";
import { childInitialEpoch } from "../../../control/epoch";
import type { CreateRunResponse } from "../../../schemas/runs";
import { insertRegistration } from "./insert";
import { leaseRefusal, leaseTerms, parentLeaseOf, type Registration } from "./registration";

/**
 * createRun's child path (a parent run or lease; no fork, no native session) as one transaction on the
 * raw pool in five round trips (Prisma's took about twelve): resolve the parent and take its tree's lock
 * SHARED (the parent's root, path and depth never change, so reading them before the lock is safe); then,
 * with a snapshot taken after the lock, the ancestry's kill state and epochs, the parent lease and the
 * team's policy; then the rows. The same checks and answers as the transactional path.
 */
export async function createChildRun(reg: Registration): Promise<CreateRunResponse> {
  const { teamId, by, input } = reg;
  const db = await pool().connect();
  let open = false;
  try {
    // The statements below are lookups by key; their plans are cached per connection, and one made while
    // the tables were small must not be a sequential scan once they have grown (docs/gate.md#plans).
    // Same round trip as the BEGIN (simple protocol), and only for this transaction.
    await db.query("BEGIN; SET LOCAL enable_seqscan = off");
    open = true;
    const found = (
      await db.query<{
        pl_id: string | null;
        pl_team: string | null;
        pl_run: string | null;
        id: string | null;
        team_id: string | null;
        root_run_id: string | null;
        path: string[] | null;
        depth: number | null;
        is_drill: boolean | null;
        holds: boolean | null;
        finished: boolean | null;
        locked: string | null;
      }>({
        ...preparedName("quiesce_child_parent"),
        // holds: a run of the parent's path is held by this key (runs by primary key, as below).
        text: `SELECT pl.id AS pl_id, pl.team_id AS pl_team, pl.run_id AS pl_run,
                      r.id, r.team_id, r.root_run_id, r.path, r.depth, r.is_drill, r.finished_at IS NOT NULL AS finished,
                      EXISTS (SELECT 1 FROM runs h WHERE h.id = ANY (r.path) AND h.team_id IS NOT DISTINCT FROM $3
                                 AND h.holder_key_id = $4) AS holds,
                      CASE WHEN r.team_id = $3 THEN pg_advisory_xact_lock_shared(hashtextextended(r.root_run_id, 0))::text END AS locked
                 FROM (SELECT $1::text AS run_id, $2::text AS lease_id) q
                 LEFT JOIN leases pl ON pl.id = q.lease_id
                 LEFT JOIN runs r ON r.id = CASE WHEN q.lease_id IS NOT NULL AND pl.team_id = $3 THEN pl.run_id ELSE q.run_id END`,
        values: [input.parentRunId ?? null, input.parentLeaseId ?? null, teamId, by.holderKeyId],
      })
    ).rows[0]!;
    if (input.parentLeaseId) {
      if (!found.pl_id || found.pl_team !== teamId) throw notFound("parent lease");
      if (input.parentRunId && found.pl_run !== input.parentRunId) throw badRequest("parentLeaseId: not a lease of parentRunId");
    }
    if (!found.id || found.team_id !== teamId) throw notFound("parent run");
    // Same team is not enough: a child is registered by the parent's holder or with the parent's lease.
    if (!input.parentLeaseId && !by.system && !found.holds)
      throw new QuiesceError(
        "forbidden",
        "parentRunId: only the holder of the parent run may register under it (present its lease as parentLeaseId)",
      );
    if (found.finished) throw new QuiesceError("conflict", "parentRunId: the parent run is finished");
    const parent = { runId: found.id, rootRunId: found.root_run_id!, path: found.path!, depth: found.depth!, isDrill: found.is_drill! };
    const facts = (
      await db.query<{
        killed: boolean;
        epochs: number[] | null;
        policy: number | null;
        id: string | null;
        path: string[] | null;
        scopes: string[] | null;
        valid_until: Date | null;
        max_valid_until: Date | null;
        revoked_at: Date | null;
      }>({
        ...preparedName("quiesce_child_facts"),
        // The ancestry by primary key only: its team is a filter (IS NOT DISTINCT FROM is not an index
        // condition), so a plan cannot walk one of the team-leading indexes instead. The parent lease by id
        // or, without one, the parent run's newest live lease: two branches, each with its own index.
        text: `SELECT (SELECT coalesce(bool_or(c.lifecycle = 'killed'), false) FROM runs c
                        WHERE c.id = ANY ($1::text[]) AND c.team_id IS NOT DISTINCT FROM $2) AS killed,
                      (SELECT array_agg(c.epoch) FROM runs c WHERE c.id = ANY ($1::text[]) AND c.team_id IS NOT DISTINCT FROM $2) AS epochs,
                      (SELECT t.lease_max_lifetime_seconds FROM teams t WHERE t.id = $2) AS policy,
                      pl.id, pl.path, pl.scopes, pl.valid_until, pl.max_valid_until, pl.revoked_at
                 FROM (SELECT 1) one
                 LEFT JOIN LATERAL (
                      SELECT l.* FROM leases l WHERE $3::text IS NOT NULL AND l.id = $3
                      UNION ALL
                      (SELECT l.* FROM leases l WHERE $3::text IS NULL AND l.run_id = $4
                        ORDER BY (l.revoked_at IS NULL) DESC, l.created_at DESC LIMIT 1)
                      LIMIT 1) pl ON true`,
        values: [parent.path, teamId, found.pl_id, parent.runId],
      })
    ).rows[0]!;
    if (facts.killed) throw new QuiesceError("conflict", "parentRunId: the parent run is killed");
    const epoch = childInitialEpoch((facts.epochs ?? []).map((e) => ({ epoch: e })));
    if (!facts.id) throw new QuiesceError("conflict", "parentRunId: the parent run holds no lease");
    const now = Date.now();
    const parentLease = parentLeaseOf({
      id: facts.id,
      path: facts.path!,
      scopes: facts.scopes!,
      validUntil: facts.valid_until!,
      maxValidUntil: facts.max_valid_until,
      revokedAt: facts.revoked_at,
    });
    const lease = deriveChildLease(parentLease, leaseTerms(input), now, {
      maxLifetimeSeconds: facts.policy ?? DEFAULT_LEASE_MAX_LIFETIME_SECONDS,
    });
    if (!lease.ok) throw leaseRefusal(lease);
    const out = await insertRegistration(db, reg, { parent, parentLease, lease: lease.lease, epoch, now });
    open = false;
    await db.query("COMMIT");
    return out;
  } catch (err) {
    if (open) await db.query("ROLLBACK").catch(() => undefined);
    throw err;
  } finally {
    db.release();
  }
}
