// Serialization between control writes and gate decisions (docs/architecture.md#the-gate).
// Every gate decision takes a transaction-level SHARED advisory lock keyed by the run tree's root
// (inside the quiesce_gate SQL function); every lifecycle / breaker / kill write takes the same key
// EXCLUSIVELY before it changes anything. So a write committed before a decision is seen by it, and a
// decision committed before a kill is seen by the kill (its operation is already `running`).
// Row locks (FOR SHARE) on the hot root row would create MultiXacts under load; advisory locks do not.
import "server-only";
import type { Tx } from "./prisma";
import { notFound } from "../errors";
import { assertTeam } from "../auth/authorize";
import type { Principal } from "../auth/principal";
import { sql, type Sql } from "./sql";

/** SQL expression for the lock key of a root run id; the gate function uses the same expression. */
export const TREE_LOCK_SQL = "hashtextextended($1, 0)";
/** The same key over a column of a statement built with `sql` (the kill locks its targets' roots at once). */
export const treeLockKey = (root: Sql): Sql => sql`hashtextextended(${root}, 0)`;

export async function lockRunTreeExclusive(tx: Tx, rootRunId: string): Promise<void> {
  await tx.$executeRawUnsafe(`SELECT pg_advisory_xact_lock(${TREE_LOCK_SQL})`, rootRunId);
}

/**
 * The opening of every operator write on a run: find it, refuse another team's (404), then take its
 * tree's lock. Callers re-read what they change after this returns — a kill may have committed while
 * they waited for the lock.
 */
export async function lockRunOfTeam(tx: Tx, p: Principal, runId: string): Promise<{ teamId: string; rootRunId: string }> {
  const found = await tx.run.findUnique({ where: { id: runId }, select: { teamId: true, rootRunId: true } });
  if (!found) throw notFound("run");
  assertTeam(p, found.teamId, "run");
  await lockRunTreeExclusive(tx, found.rootRunId);
  return found;
}

/** SQL arguments of a team's stop-scope lock (two-int advisory key space); the gate uses the same. */
export const TEAM_SCOPE_LOCK_SQL = "7114, hashtext($1)";

/**
 * A stop-scope writer's lock (docs/fleet-stop.md): every gate call takes the team's key SHARED after its
 * tree key, so a scope that commits under this EXCLUSIVE key is seen by every decision that begins after
 * the commit, and every decision that committed before it is visible to the scope's barriers.
 */
export async function lockTeamScopesExclusive(tx: Tx, teamId: string): Promise<void> {
  await tx.$executeRawUnsafe(`SELECT pg_advisory_xact_lock(${TEAM_SCOPE_LOCK_SQL})`, teamId);
}
