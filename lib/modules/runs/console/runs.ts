// Read model for the runs list (docs/console.md#runs-list): status (active, paused, killed, finished),
// activity (working, idle, stale: docs/console.md#run-activity), lifecycle, breaker, harness, agent, time range and search filters; three sorts; roots only with
// their children one expand away; keyset pages (a cursor, never OFFSET: page 2 000 costs what page 1
// costs, and a run registered meanwhile does not shift the next page). Team-scoped by construction:
// every statement carries the principal's team, so another team's runs are never counted or returned.
import "server-only";
import { prisma } from "../../../platform/db/prisma";
import { authorize } from "../../../platform/auth/authorize";
import type { Principal } from "../../../platform/auth/principal";
import type { BreakerState, Harness, Lifecycle } from "../../../control/types";
import { runStatus, type RunStatus } from "../../../control/fleet";
import { escapeLike } from "../../../platform/security/text";
import { encodeRunsCursor, type RunsCursor, type RunsListQuery, type RunsSort } from "../../../schemas/runs-list";
import { consoleTeam } from "../../../platform/auth/console-team";
import type { RunSummary, RunView } from "../../../schemas/runs";
import { runSummary } from "../internal/read-shapes";
import {
  ACTIVITY_COLUMNS,
  ACTIVITY_LATERAL,
  activityFactsOf,
  activityPredicate,
  runActivityView,
  type ActivityDbRow,
  type RunActivityView,
} from "../internal/activity-sql";

/**
 * A row of the runs list: the run's one read shape (RunSummary, as GET /api/v1/runs serves it) and what
 * the list adds — its status, activity (with its running calls and when it was last heard from), the last
 * changes' times, its children and agent.
 */
export type RunRow = RunSummary &
  Pick<RunView, "lifecycleChangedAt" | "lifecycleReason" | "breakerChangedAt"> &
  RunActivityView & {
    status: RunStatus;
    childCount: number;
    agent: string | null;
    finishedAt: string | null;
  };

export interface RunsFilter extends Omit<RunsListQuery, "roots"> {
  /** Only tree roots (each with its direct-children count; children are one expand away). */
  rootsOnly?: boolean;
  /** Only the direct children of this run (what an expanded row shows). */
  parentRunId?: string;
  pageSize?: number;
}

export interface RunsPage {
  items: RunRow[];
  /** every run matching the filters (not just this page), counted up to COUNT_CAP */
  total: number;
  /** true when `total` is a lower bound ("N+"): more than COUNT_CAP match, or an activity count left older runs unjudged */
  totalCapped: boolean;
  pageSize: number;
  sort: RunsSort;
  /** the next page (older, for newest first), or null on the last page */
  nextCursor: string | null;
  /** the previous page, or null on the first page */
  prevCursor: string | null;
}

export const DEFAULT_PAGE_SIZE = 50;
/**
 * Matching runs are counted exactly up to here, then shown as "10 000+": an exact count of 85 000
 * active runs reads 85 000 index entries on every refresh, and nobody pages through 10 000 runs.
 * (A fleet stop of "all matching" does not need the number: its dry run counts exactly.)
 */
export const COUNT_CAP = 10_000;
/**
 * Above this many matches by the planner's estimate, the exact count is not run at all and the list says
 * "10 000+": a broad search ("bench") matches every run, and the trigram index cannot stop at the cap,
 * so counting it read the whole team (docs/design/runs-list-estimates.md).
 */
export const ESTIMATE_SKIP = 5 * COUNT_CAP;
/**
 * An activity filter judges at most this many runs of the other filters per page, and its count the newest this
 * many: no index holds an activity, and a rare one (no idle run among 85 000) would otherwise judge the whole team.
 */
export const ACTIVITY_WALK = 5_000;
/** A search estimated to match at most this many runs reads them by the trigram indexes and sorts them. */
export const SEARCH_BY_INDEX_MAX = 20_000;

/** One page: `source` is the (filtered) runs as `r`; each row's children and activity facts are read for the page only. */
function pageSqlOf(source: string, col: string, order: "ASC" | "DESC", pageSize: number): string {
  return `
    SELECT r.id, r.title, r.task_id, r.harness::text AS harness, r.lifecycle::text AS lifecycle, r.lifecycle_changed_at,
           r.lifecycle_reason, r.breaker::text AS breaker, r.breaker_changed_at, r.breaker_probe_op_id, r.breaker_held, r.epoch, r.parent_run_id, r.root_run_id,
           r.depth, r.native_agent_id, r.created_by, r.created_at, r.finished_at, r.last_heartbeat_at, r.is_drill,
           (SELECT count(*) FROM runs c WHERE c.team_id = r.team_id AND c.parent_run_id = r.id)::int AS child_count,
           ${ACTIVITY_COLUMNS}
      FROM ${source} ${ACTIVITY_LATERAL}
     ORDER BY ${col} ${order}, r.id ${order}
     LIMIT ${pageSize + 1}`;
}

const SORT_SQL: Record<RunsSort, { col: string; desc: boolean; value: (r: DbRow) => string }> = {
  newest: { col: "r.created_at", desc: true, value: (r) => r.created_at.toISOString() },
  oldest: { col: "r.created_at", desc: false, value: (r) => r.created_at.toISOString() },
  task: { col: "r.task_id", desc: false, value: (r) => r.task_id },
};

interface DbRow extends ActivityDbRow {
  id: string;
  title: string | null;
  task_id: string;
  harness: Harness;
  lifecycle: Lifecycle;
  lifecycle_changed_at: Date;
  lifecycle_reason: string | null;
  breaker: BreakerState;
  breaker_changed_at: Date;
  breaker_probe_op_id: string | null;
  breaker_held: boolean;
  epoch: number;
  parent_run_id: string | null;
  root_run_id: string;
  depth: number;
  child_count: number;
  native_agent_id: string | null;
  created_by: string | null;
  created_at: Date;
  finished_at: Date | null;
  last_heartbeat_at: Date | null;
  is_drill: boolean;
}

/**
 * WHERE clause (without the cursor and the activity) and its parameters; $1 is always the team. `activity`
 * is the activity predicate at `now`, kept apart because the count judges it over a bounded walk.
 */
function whereOf(teamId: string, f: RunsFilter, now: number): { sql: string[]; params: unknown[]; activity: string | null } {
  const params: unknown[] = [teamId];
  const sql = ["r.team_id = $1"];
  const p = (v: unknown) => {
    params.push(v);
    return `$${params.length}`;
  };
  switch (f.status) {
    case "active":
      sql.push("r.lifecycle = 'normal' AND r.finished_at IS NULL");
      break;
    case "paused":
      sql.push("r.lifecycle = 'paused' AND r.finished_at IS NULL");
      break;
    case "killed":
      sql.push("r.lifecycle = 'killed'");
      break;
    case "finished":
      sql.push("r.lifecycle <> 'killed' AND r.finished_at IS NOT NULL");
      break;
  }
  if (f.lifecycle) sql.push(`r.lifecycle = ${p(f.lifecycle)}::"Lifecycle"`);
  if (f.breaker) sql.push(`r.breaker = ${p(f.breaker)}::"Breaker"`);
  if (f.harness) sql.push(`r.harness = ${p(f.harness)}::"Harness"`);
  // An agent is the harness's agent identity or the run's creator label (as in a fleet-stop filter).
  if (f.agent) {
    const a = p(f.agent);
    sql.push(`(r.native_agent_id = ${a} OR r.created_by = ${a})`);
  }
  if (f.from) sql.push(`r.created_at >= ${p(f.from)}`);
  if (f.to) sql.push(`r.created_at < ${p(f.to)}`);
  // Search: ids exactly (a pasted id finds that run and nothing else), task and title by substring,
  // case-insensitive, with % and _ as literal characters (the same meaning as GET /api/v1/runs?q=).
  const term = f.q?.trim();
  if (term) {
    const exact = p(term);
    const like = p(`%${escapeLike(term)}%`);
    sql.push(
      `(r.id = ${exact} OR r.root_run_id = ${exact} OR r.native_session_id = ${exact} OR r.task_id ILIKE ${like} OR r.title ILIKE ${like})`,
    );
  }
  if (f.parentRunId) sql.push(`r.parent_run_id = ${p(f.parentRunId)}`);
  else if (f.rootsOnly) sql.push("r.parent_run_id IS NULL");
  // The instant is a literal, not a parameter: it is the server's own (never input), and the walk's edge query reads
  // the same WHERE without the activity, so a parameter only the activity used would be one too many there.
  const activity = f.activity ? activityPredicate(f.activity, `'${new Date(now).toISOString()}'::timestamptz`) : null;
  return { sql, params, activity };
}

export async function listConsoleRuns(p: Principal, filter: RunsFilter): Promise<RunsPage> {
  authorize(p, "run.read");
  const teamId = consoleTeam(p);
  const pageSize = Math.min(Math.max(Math.trunc(filter.pageSize ?? DEFAULT_PAGE_SIZE), 5), 100);
  const sort: RunsSort = filter.sort ?? "newest";
  const s = SORT_SQL[sort];
  const cursor: RunsCursor | undefined = filter.cursor?.sort === sort ? filter.cursor : undefined;
  const now = Date.now();
  const { sql, params, activity } = whereOf(teamId, filter, now);
  const baseWhere = sql.join(" AND ");
  const countWhere = activity ? `${baseWhere} AND ${activity}` : baseWhere;
  // An activity is judged run by run (no index holds it), so its count judges the newest ACTIVITY_WALK
  // runs of the other filters and says "N+" when older ones were left unjudged.
  const countSql = activity
    ? `SELECT (count(*) FILTER (WHERE m))::int AS n, count(*)::int AS walked
         FROM (SELECT ${activity} AS m FROM runs r WHERE ${baseWhere} ORDER BY r.created_at DESC, r.id DESC LIMIT ${ACTIVITY_WALK}) w`
    : `SELECT count(*)::int AS n FROM (SELECT 1 FROM runs r WHERE ${countWhere} LIMIT ${COUNT_CAP + 1}) m`;
  const countParams = [...params];

  // Walking backwards (a "before" cursor) reads in the opposite order and reverses the page.
  const backwards = cursor?.dir === "before";
  const desc = s.desc !== backwards;
  if (cursor) {
    params.push(cursor.value, cursor.id);
    const v = sort === "task" ? `$${params.length - 1}` : `$${params.length - 1}::timestamptz`;
    sql.push(`(${s.col}, r.id) ${desc ? "<" : ">"} (${v}, $${params.length})`);
  }
  const order = desc ? "DESC" : "ASC";
  const db = prisma();
  // The planner's estimate of the matches decides two things before anything is read: whether to count
  // exactly, and (for a search) whether to read the matches through the trigram indexes and sort them,
  // or to walk the sort's index and filter. A term matching a few thousand runs that all sit far down the
  // list (`run 4` in titles numbered by age) made the walk read half the team (docs/design/runs-list-estimates.md).
  const plan = await db.$queryRawUnsafe<{ "QUERY PLAN": [{ Plan: { "Plan Rows": number } }] }[]>(
    `EXPLAIN (FORMAT JSON) SELECT 1 FROM runs r WHERE ${countWhere}`,
    ...countParams,
  );
  const estimate = plan[0]?.["QUERY PLAN"][0]?.Plan["Plan Rows"] ?? 0;
  const fenced = filter.q?.trim() && estimate <= SEARCH_BY_INDEX_MAX ? " OFFSET 0" : "";
  const walkWhere = sql.join(" AND ");
  const walk = `SELECT * FROM runs r WHERE ${walkWhere} ORDER BY ${s.col} ${order}, r.id ${order}`;
  const source = activity
    ? `(SELECT * FROM (${walk} LIMIT ${ACTIVITY_WALK}) r WHERE ${activity}) r`
    : `(SELECT * FROM runs r WHERE ${walkWhere}${fenced}) r`;
  const pageSql = pageSqlOf(source, s.col, order, pageSize);
  const [rows, count] = await Promise.all([
    db.$queryRawUnsafe<DbRow[]>(pageSql, ...params),
    estimate > ESTIMATE_SKIP && !activity
      ? [{ n: COUNT_CAP + 1, walked: 0 }]
      : db.$queryRawUnsafe<{ n: number; walked?: number }[]>(countSql, ...countParams),
  ]);
  const n = count[0]?.n ?? 0;
  const unjudged = (count[0]?.walked ?? 0) >= ACTIVITY_WALK;
  const more = rows.length > pageSize;
  // A page that judged its whole walk without filling continues from the walk's last run, not from its own.
  const edge =
    activity && !more
      ? (
          await db.$queryRawUnsafe<DbRow[]>(
            `SELECT r.id, r.created_at, r.task_id FROM runs r WHERE ${walkWhere}
              ORDER BY ${s.col} ${order}, r.id ${order} OFFSET ${ACTIVITY_WALK - 1} LIMIT 1`,
            ...params,
          )
        )[0]
      : undefined;
  const page = rows.slice(0, pageSize);
  if (backwards) page.reverse();
  const first = page[0];
  const last = page[page.length - 1];
  const at = (dir: "after" | "before", r: DbRow) => encodeRunsCursor({ dir, sort, value: s.value(r), id: r.id });
  // Forwards: a next page exists when one more row was read; a previous one whenever we came by cursor.
  // Backwards: the mirror image.
  const hasNext = backwards ? true : more;
  const hasPrev = backwards ? more : cursor !== undefined;
  const nextCursor = !backwards && edge ? at("after", edge) : hasNext && last ? at("after", last) : null;
  const prevCursor = backwards && edge ? at("before", edge) : hasPrev && first ? at("before", first) : null;
  return {
    total: Math.min(n, COUNT_CAP),
    totalCapped: n > COUNT_CAP || unjudged,
    pageSize,
    sort,
    nextCursor,
    prevCursor,
    items: page.map((r) => toRow(r, now)),
  };
}

function toRow(r: DbRow, now: number): RunRow {
  const summary = runSummary(
    {
      id: r.id,
      taskId: r.task_id,
      title: r.title,
      harness: r.harness,
      parentRunId: r.parent_run_id,
      rootRunId: r.root_run_id,
      depth: r.depth,
      lifecycle: r.lifecycle,
      breaker: r.breaker,
      breakerChangedAt: r.breaker_changed_at,
      breakerProbeOpId: r.breaker_probe_op_id,
      breakerHeld: r.breaker_held,
      epoch: r.epoch,
      createdAt: r.created_at,
      lastHeartbeatAt: r.last_heartbeat_at,
      isDrill: r.is_drill,
    },
    now,
  );
  return {
    ...summary,
    lifecycleChangedAt: r.lifecycle_changed_at.toISOString(),
    lifecycleReason: r.lifecycle_reason,
    breakerChangedAt: r.breaker_changed_at.toISOString(),
    status: runStatus({ lifecycle: r.lifecycle, finishedAt: r.finished_at?.getTime() ?? null }),
    ...runActivityView(activityFactsOf(r), now),
    childCount: r.child_count,
    agent: r.native_agent_id ?? r.created_by,
    finishedAt: r.finished_at?.toISOString() ?? null,
  };
}

/**
 * The most runs "select all N matching" can name one by one: the size of a stop filter's `runIds`
 * (lib/schemas/stops.ts). Beyond it the console refuses rather than stopping a part of what was asked.
 */
export const MATCHING_IDS_CAP = 10_000;

/**
 * Every run matching the list's filters, by id (oldest first), for a fleet stop of filters a stop scope
 * cannot express (search, breaker): the stop then names exactly these runs. `capped` when more than
 * MATCHING_IDS_CAP match (the ids are then not returned: a partial list would stop less than the
 * operator selected while looking like all of it). Needs `fleet.stop`: only a stop uses it.
 */
export async function listMatchingRunIds(p: Principal, filter: RunsFilter): Promise<{ ids: string[]; capped: boolean }> {
  authorize(p, "fleet.stop");
  const { sql, params, activity } = whereOf(consoleTeam(p), { ...filter, cursor: undefined, parentRunId: undefined }, Date.now());
  // The activity at this moment, judged for every run (not the page's bounded walk): the stop names exactly these runs.
  if (activity) sql.push(activity);
  const rows = await prisma().$queryRawUnsafe<{ id: string }[]>(
    `SELECT r.id FROM runs r WHERE ${sql.join(" AND ")} ORDER BY r.created_at, r.id LIMIT ${MATCHING_IDS_CAP + 1}`,
    ...params,
  );
  if (rows.length > MATCHING_IDS_CAP) return { ids: [], capped: true };
  return { ids: rows.map((r) => r.id), capped: false };
}
