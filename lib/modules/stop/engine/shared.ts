// What every step of the barrier engine shares (docs/architecture.md#the-cancellation-barrier): the
// system-principal check, and the SQL fragments the steps read a barrier's subtree with.
import "server-only";
import { forbidden } from "../../../platform/errors";
import type { Principal } from "../../../platform/auth/principal";

/** Engine steps are callable only by system principals (the `barrier-worker` process). */
export function system(p: Principal): void {
  if (p.type !== "system") throw forbidden("barrier engine steps are for system principals");
}

// A barrier's subtree (the stopped run and its descendants) as an array, over aliases `b` (barrier) and `r` (its run).
export const SUBTREE_SQL = `CROSS JOIN LATERAL (SELECT array_agg(c.id) AS ids FROM runs c WHERE c.root_run_id = r.root_run_id AND r.id = ANY (c.path)) sub`;
// Operations of a barrier's subtree still in flight, whichever barrier of the tree is settling them.
export const IN_FLIGHT_SQL = `(SELECT count(*) FROM operations o WHERE o.run_id = ANY (sub.ids) AND o.state IN ('queued', 'scheduled', 'running'))::int`;
// The barrier's own settlements not settled yet.
export const PENDING_OWN_SQL = `(SELECT count(*) FROM settlements s WHERE s.barrier_id = b.id AND s.settled_state IS NULL)::int`;
