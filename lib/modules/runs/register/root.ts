import "server-only";
import { pool, preparedName } from "../../../platform/db/pool";
import { DEFAULT_LEASE_MAX_LIFETIME_SECONDS, newRootLease } from "../../../control/lease";
import type { CreateRunResponse } from "../../../schemas/runs";
import { insertRegistration } from "./insert";
import { leaseRefusal, leaseTerms, type Registration } from "./registration";

/**
 * createRun's plain root path (no parent, fork or native session) in two round trips on the raw pool,
 * no Prisma and no interactive transaction: the team's lease policy, then ONE statement that inserts the
 * run and its lease and records the run.register audit intent (appended, with the control notification,
 * while the statement's transaction commits: appendAuditAtCommit). Same rows, audit and answer as the
 * transactional path (test/api/runs.test.ts compares them).
 */
export async function createRootRun(reg: Registration): Promise<CreateRunResponse> {
  const now = Date.now();
  const team = await pool().query<{ s: number | null }>({
    ...preparedName("quiesce_team_lease_policy"),
    text: "SELECT lease_max_lifetime_seconds AS s FROM teams WHERE id = $1",
    values: [reg.teamId],
  });
  const lease = newRootLease(leaseTerms(reg.input), now, {
    maxLifetimeSeconds: team.rows[0]?.s ?? DEFAULT_LEASE_MAX_LIFETIME_SECONDS,
  });
  if (!lease.ok) throw leaseRefusal(lease);
  return insertRegistration(pool(), reg, { parent: null, parentLease: null, lease: lease.lease, epoch: 1, now });
}
