// Run reads (docs/architecture.md#the-wire-contract): one run with its children and leases, and the team's
// runs. Registration is in register/ (createRun).
import "server-only";
import { prisma } from "../../platform/db/prisma";
import { pool, preparedName } from "../../platform/db/pool";
import { badRequest, notFound } from "../../platform/errors";
import type { ListRunsQuery, ListRunsResponse, RunView } from "../../schemas/runs";
import type { Principal } from "../../platform/auth/principal";
import { assertTeam, authorize } from "../../platform/auth/authorize";
import { runSearchWhere } from "./internal/run-search";
import { teamFor } from "./internal/team";
import { runState, runSummary, type StateRow, type SummaryRow } from "./internal/read-shapes";

type RunRow = Awaited<ReturnType<ReturnType<typeof prisma>["run"]["findUniqueOrThrow"]>>;

// getRunView's one statement: the run, its first 500 children (as runSummary reads them) and its leases.
const SUMMARY_COLUMNS = `id, task_id AS "taskId", title, harness, parent_run_id AS "parentRunId", root_run_id AS "rootRunId", depth,
  lifecycle, breaker, breaker_changed_at AS "breakerChangedAt", breaker_probe_op_id AS "breakerProbeOpId",
  breaker_held AS "breakerHeld", epoch, created_at AS "createdAt", last_heartbeat_at AS "lastHeartbeatAt", is_drill AS "isDrill"`;
const RUN_VIEW_SQL = `SELECT ${SUMMARY_COLUMNS}, team_id AS "teamId",
    lifecycle_changed_at AS "lifecycleChangedAt", lifecycle_changed_by AS "lifecycleChangedBy", lifecycle_reason AS "lifecycleReason",
    breaker_changed_by AS "breakerChangedBy", breaker_reason AS "breakerReason", breaker_failures AS "breakerFailures",
    native_session_id AS "nativeSessionId", native_agent_id AS "nativeAgentId", native_thread_id AS "nativeThreadId",
    native_turn_id AS "nativeTurnId", last_native_state AS "lastNativeState",
    (SELECT coalesce(json_agg(c ORDER BY c."createdAt", c.id), '[]')
       FROM (SELECT ${SUMMARY_COLUMNS} FROM runs WHERE parent_run_id = r.id ORDER BY created_at, id LIMIT 500) c) AS children,
    (SELECT coalesce(json_agg(l ORDER BY l."createdAt", l.id), '[]')
       FROM (SELECT id, parent_lease_id AS "parentLeaseId", scopes, valid_until AS "validUntil", revoked_at AS "revokedAt",
                    revoked_by AS "revokedBy", created_at AS "createdAt"
               FROM leases WHERE run_id = r.id) l) AS leases
  , EXISTS (SELECT 1 FROM runs h WHERE h.id = ANY (r.path) AND h.team_id = r.team_id AND h.holder_key_id = $2) AS "holds"
  FROM runs r WHERE r.id = $1`;

type JsonDates<T, K extends keyof T> = Omit<T, K> & { [P in K]: T[P] extends Date ? string : string | null };
type RunViewRow = SummaryRow &
  StateRow &
  Pick<RunRow, "teamId"> & {
    children: JsonDates<SummaryRow, "breakerChangedAt" | "createdAt" | "lastHeartbeatAt">[];
    leases: {
      id: string;
      parentLeaseId: string | null;
      scopes: string[];
      validUntil: string;
      revokedAt: string | null;
      revokedBy: string | null;
      createdAt: string;
    }[];
    holds: boolean;
  };

const iso = (t: string) => new Date(t).toISOString();

/**
 * The run with its children and leases: one statement on the raw pool (an authenticated read agents
 * make; through Prisma it was three queries and Prisma's per-query work, docs/design/api-process.md).
 */
export async function getRunView(p: Principal, runId: string): Promise<RunView> {
  authorize(p, "run.read");
  const { rows } = await pool().query<RunViewRow>({
    ...preparedName("quiesce_run_view"),
    text: RUN_VIEW_SQL,
    values: [runId, p.type === "key" ? p.keyId : null],
  });
  const r = rows[0];
  if (!r) throw notFound("run");
  assertTeam(p, r.teamId, "run");
  const now = Date.now();
  return {
    ...runSummary(r, now),
    ...runState(r),
    children: r.children.map((c) =>
      runSummary(
        {
          ...c,
          breakerChangedAt: new Date(c.breakerChangedAt),
          createdAt: new Date(c.createdAt),
          lastHeartbeatAt: c.lastHeartbeatAt === null ? null : new Date(c.lastHeartbeatAt),
        },
        now,
      ),
    ),
    leases: r.leases.map((l) => ({
      // A lease id is a capability: only its run's holders (or the system) see it.
      leaseId: r.holds || p.type === "system" ? l.id : null,
      parentLeaseId: l.parentLeaseId,
      scopes: l.scopes,
      validUntil: iso(l.validUntil),
      revokedAt: l.revokedAt === null ? null : iso(l.revokedAt),
      revokedBy: l.revokedBy,
      createdAt: iso(l.createdAt),
    })),
  };
}

function decodeCursor(c: string): { at: Date; id: string } {
  try {
    const [at, id] = JSON.parse(Buffer.from(c, "base64url").toString("utf8")) as [string, string];
    const d = new Date(at);
    if (typeof id !== "string" || Number.isNaN(d.getTime())) throw new Error();
    return { at: d, id };
  } catch {
    throw badRequest("query.cursor: not a cursor this API issued");
  }
}

/** The team's runs, newest first, keyset-paginated (stable under concurrent inserts). */
export async function listRuns(p: Principal, filter: ListRunsQuery & { teamId?: string }): Promise<ListRunsResponse> {
  authorize(p, "run.read");
  const teamId = teamFor(p, filter.teamId);
  const limit = filter.limit ?? 50;
  const cursor = filter.cursor ? decodeCursor(filter.cursor) : null;
  const and: object[] = [];
  if (filter.q) and.push(runSearchWhere(filter.q));
  if (cursor) and.push({ OR: [{ createdAt: { lt: cursor.at } }, { createdAt: cursor.at, id: { lt: cursor.id } }] });
  const rows = await prisma().run.findMany({
    where: {
      teamId,
      ...(filter.lifecycle ? { lifecycle: filter.lifecycle } : {}),
      ...(filter.parentRunId ? { parentRunId: filter.parentRunId } : filter.rootsOnly === "true" ? { parentRunId: null } : {}),
      ...(and.length ? { AND: and } : {}),
    },
    orderBy: [{ createdAt: "desc" }, { id: "desc" }],
    take: limit + 1,
  });
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  const nextCursor =
    rows.length > limit && last ? Buffer.from(JSON.stringify([last.createdAt.toISOString(), last.id])).toString("base64url") : null;
  const now = Date.now();
  return { runs: page.map((r) => runSummary(r, now)), nextCursor };
}
