// Runs list at scale (docs/console.md#runs-list): the server time of the runs list for each filter, sort and
// view, at 100 000 runs of one team (and 10 000 of another team on the same table). Measures the dal
// functions the page and its JSON endpoint call (listConsoleRuns, listRunTimeline), one call at a time,
// against a baseline measured in the same run: a plain indexed `SELECT … ORDER BY created_at DESC
// LIMIT 50` on the team's runs through the same client. Reported as figures and ratios, never asserted.
import os from "node:os";
import pg from "pg";
import { performance } from "node:perf_hooks";
import type { BenchSection } from "./lib/section";
import { percentile } from "./lib/measure";
import { ms, ratio, type BenchTable } from "./lib/report";
import { COUNT_CAP, listConsoleRuns, type RunsFilter } from "../lib/modules/runs/console/runs";
import { listRunTimeline } from "../lib/modules/runs/console/timeline";
import { runsView } from "../lib/modules/runs/console/views";
import { decodeRunsCursor, parseRunsQuery } from "../lib/schemas/runs-list";
import { prisma } from "../lib/platform/db/prisma";
import { newId } from "../lib/platform/ids";

export const DEFAULT_RUNS = 100_000;
const OTHER_TEAM_RUNS = 10_000;
const TARGET_P95_MS = 150;

/**
 * Seeds `n` runs for a team in a few statements (generate_series): 70 % roots, the rest children of
 * the root before them; four harnesses, 50 agents, 1 000 task ids, created over 30 days; 85 % active,
 * 4 % paused, 6 % killed, 5 % finished; 2 000 running operations and a decision trail for one run.
 */
export async function seedRuns(db: pg.Client, teamId: string, n: number): Promise<void> {
  await db.query(
    `INSERT INTO runs (id, team_id, task_id, parent_run_id, root_run_id, path, depth, harness, native_agent_id, title,
                       lifecycle, finished_at, created_by, created_at)
     SELECT $1 || '_' || g,
            $1,
            'task-' || (g % 1000),
            CASE WHEN g % 10 >= 7 THEN $1 || '_' || (g - (g % 10) + 6) END,
            CASE WHEN g % 10 >= 7 THEN $1 || '_' || (g - (g % 10) + 6) ELSE $1 || '_' || g END,
            CASE WHEN g % 10 >= 7 THEN ARRAY[$1 || '_' || (g - (g % 10) + 6), $1 || '_' || g] ELSE ARRAY[$1 || '_' || g] END,
            CASE WHEN g % 10 >= 7 THEN 1 ELSE 0 END,
            (ARRAY['claude_code','codex','mcp','custom']::"Harness"[])[1 + g % 4],
            'agent-' || (g % 50),
            'bench run ' || g,
            (CASE WHEN g % 100 < 4 THEN 'paused' WHEN g % 100 < 10 THEN 'killed' ELSE 'normal' END)::"Lifecycle",
            CASE WHEN g % 100 >= 95 THEN now() END,
            'key:bench',
            now() - interval '30 days' + (g * interval '30 days' / $2)
       FROM generate_series(1, $2) AS g`,
    [teamId, n],
  );
  await db.query(
    `INSERT INTO operations (id, team_id, operation_id, run_id, epoch_stamp, kind, tool, state, started_at)
     SELECT $1 || '_op_' || g, $1, 'op-' || g, $1 || '_' || (g * 37 % $2 + 1), 1, 'call', 'deploy', 'running', now()
       FROM generate_series(1, 2000) AS g`,
    [teamId, n],
  );
  await db.query(
    `INSERT INTO gate_decisions (team_id, run_id, source, decision, reason, epoch_seen, current_epoch, at)
     SELECT $1, $1 || '_' || $2, 'gate', 'allow', 'ok', 1, 1, now() - g * interval '1 second' FROM generate_series(1, 5000) AS g`,
    [teamId, n],
  );
}

interface Case {
  label: string;
  call: () => Promise<unknown>;
}

/**
 * Samples every case round-robin (one call of each, then the next round), so a burst of load on this
 * shared machine lands on every view and on the baseline alike, and the ratios stay meaningful.
 */
async function sampleAll(cases: Case[], iterations: number, warmup: number): Promise<number[][]> {
  for (let i = 0; i < warmup; i++) for (const c of cases) await c.call();
  const out = cases.map(() => [] as number[]);
  for (let i = 0; i < iterations; i++)
    for (const [k, c] of cases.entries()) {
      const t0 = performance.now();
      await c.call();
      out[k]!.push(performance.now() - t0);
    }
  return out.map((t) => t.sort((a, b) => a - b));
}

export const runsListSection: BenchSection = {
  name: "runs-list",
  title: `runs-list server time at ${DEFAULT_RUNS} runs (--runs), per filter, vs a plain indexed LIMIT 50`,
  async run(ctx) {
    const RUNS = ctx.runs ?? DEFAULT_RUNS;
    const db = new pg.Client({ connectionString: ctx.url });
    await db.connect();
    try {
      const teamId = newId("team");
      const otherId = newId("team");
      const userId = newId("user");
      for (const [id, name] of [
        [teamId, "Bench list"],
        [otherId, "Bench other"],
      ] as const)
        await db.query(`INSERT INTO teams (id, slug, name) VALUES ($1, $2, $3)`, [id, id.toLowerCase(), name]);
      await db.query(`INSERT INTO users (id, email, name) VALUES ($1, $2, 'bench')`, [userId, `${userId}@bench.invalid`]);
      await db.query(`INSERT INTO memberships (id, team_id, user_id, role) VALUES ($1, $2, $3, 'viewer')`, [newId("mem"), teamId, userId]);
      const s0 = performance.now();
      await seedRuns(db, teamId, RUNS);
      await seedRuns(db, otherId, OTHER_TEAM_RUNS);
      // A table in steady state has been vacuumed (autovacuum): index-only scans and fresh statistics.
      for (const t of ["runs", "operations", "gate_decisions"]) await db.query(`VACUUM ANALYZE ${t}`);
      const seeded = performance.now() - s0;
      ctx.log(`runs-list: seeded ${RUNS + OTHER_TEAM_RUNS} runs in ${ms(seeded)} ms`);

      const principal = { type: "user", userId, email: `${userId}@bench.invalid`, teamId, role: "viewer" } as const;
      const list = (f: RunsFilter) => () => listConsoleRuns(principal, f);
      // A cursor 40 pages deep (2 000 runs in), reached by walking the pages as a person would.
      let deep: string | null = null;
      for (let i = 0; i < 40; i++) deep = (await listConsoleRuns(principal, deep ? { cursor: decodeRunsCursor(deep)! } : {})).nextCursor;
      const deepCursor = decodeRunsCursor(deep!)!;
      const day = Date.now() - 10 * 86_400_000;
      const root = `${teamId}_6`;
      const timelineRun = `${teamId}_${RUNS}`;
      const baselineSql = `SELECT id, task_id, title, lifecycle::text, created_at FROM runs WHERE team_id = $1 ORDER BY created_at DESC, id DESC LIMIT 50`;
      const cases: Case[] = [
        { label: "baseline: plain indexed SELECT … LIMIT 50", call: () => prisma().$queryRawUnsafe(baselineSql, teamId) },
        { label: "`/runs` (newest first)", call: list({}) },
        { label: "`/runs`, 41st page by cursor", call: list({ cursor: deepCursor }) },
        { label: "`/runs?sort=oldest`", call: list({ sort: "oldest" }) },
        { label: "`/runs?sort=task`", call: list({ sort: "task" }) },
        { label: "`/runs?status=active`", call: list({ status: "active" }) },
        { label: "`/runs?status=paused`", call: list({ status: "paused" }) },
        { label: "`/runs?status=killed`", call: list({ status: "killed" }) },
        { label: "`/runs?status=finished`", call: list({ status: "finished" }) },
        { label: "`/runs?harness=codex`", call: list({ harness: "codex" }) },
        { label: "`/runs?agent=agent-7`", call: list({ agent: "agent-7" }) },
        { label: "`/runs?from=…&to=…` (one day)", call: list({ from: new Date(day), to: new Date(day + 86_400_000) }) },
        { label: "`/runs?q=task-42` (search)", call: list({ q: "task-42" }) },
        { label: "`/runs?q=bench` (search matching every run)", call: list({ q: "bench" }) },
        { label: "`/runs?q=run 4` (search, 11 % of runs, all far down the list)", call: list({ q: "run 4" }) },
        { label: "`/runs?q=run 42&roots=1` (search under roots)", call: list({ q: "run 42", rootsOnly: true }) },
        { label: "`/runs?roots=1` (grouped under roots)", call: list({ rootsOnly: true }) },
        { label: "`/runs?activity=working` (calls in flight: 2 % of runs)", call: list({ activity: "working" }) },
        { label: "`/runs?activity=idle` (none match)", call: list({ activity: "idle" }) },
        { label: "`/runs?activity=stale`", call: list({ activity: "stale" }) },
        {
          label: "JSON feed `/api/console/runs?status=active` (runsView)",
          call: () => runsView(principal, parseRunsQuery(new URLSearchParams("status=active"))),
        },
        { label: "`/runs?roots=1&status=paused&harness=mcp`", call: list({ rootsOnly: true, status: "paused", harness: "mcp" }) },
        { label: "expand a root (its children)", call: list({ parentRunId: root, sort: "oldest" }) },
        { label: "run timeline, first page (5 000 decisions)", call: () => listRunTimeline(principal, timelineRun, {}) },
      ];
      const iterations = Math.max(20, Math.round(ctx.iterations / 20));
      const warmup = Math.max(3, Math.round(ctx.warmup / 20));
      const samples = await sampleAll(cases, iterations, warmup);
      const results = cases.map((c, k) => {
        const t = samples[k]!;
        const r = { label: c.label, p50: percentile(t, 50), p95: percentile(t, 95), p99: percentile(t, 99) };
        ctx.log(`runs-list: ${c.label}: p50 ${ms(r.p50)} ms, p95 ${ms(r.p95)} ms`);
        return r;
      });
      const base = results[0]!;
      const worst = Math.max(...results.slice(1).map((r) => r.p95));
      const table: BenchTable = {
        title: `Runs list server time at ${RUNS.toLocaleString("en-US")} runs (dal call, ${iterations} calls each)`,
        columns: ["view", "p50 ms", "p95 ms", "p99 ms", "p50 vs baseline", `p95 ≤ ${TARGET_P95_MS} ms`],
        rows: results.map((r) => [
          r.label,
          ms(r.p50),
          ms(r.p95),
          ms(r.p99),
          ratio(r.p50 / base.p50),
          r.p95 <= TARGET_P95_MS ? "yes" : "**no**",
        ]),
        notes: [
          `each call returns one page of 50 runs with each row's direct-children count and running calls, AND the count of matching runs (exact up to ${COUNT_CAP.toLocaleString("en-US")}, then “${COUNT_CAP.toLocaleString("en-US")}+”)`,
          `${RUNS.toLocaleString("en-US")} runs of the team (70 % roots, 30 % children; 85 % active, 4 % paused, 6 % killed, 5 % finished) plus ${OTHER_TEAM_RUNS.toLocaleString("en-US")} of another team, seeded in ${ms(seeded / 1000)} s with generate_series; worst p95 ${ms(worst)} ms`,
          "views sampled round-robin (one call of each per round), so load on the machine falls on every view and the baseline alike",
          `${os.cpus().length} CPU(s), load average ${os
            .loadavg()
            .map((x) => x.toFixed(1))
            .join(" / ")} when done, ${ctx.server}; calls one at a time from the bench process (Prisma client, raw SQL)`,
        ],
      };
      return { tables: [table], data: { runs: RUNS, seededMs: seeded, iterations, results } };
    } finally {
      await db.end();
    }
  },
};
