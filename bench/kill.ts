// Kill at scale: a tree of 100 runs (root → 9 children → 90 grandchildren) holding 10 000
// queued operations and 50 running ones on the simulated deployment provider (quiet period 0).
//   kill → dispatch stopped: the kill's first transaction committed (runs killed, leases revoked: every
//                            gate, admit and heartbeat under the tree denies; queued work cannot start)
//   kill → queued work cancelled: killRun() returns — its second transaction marked the 10 000 queued
//                            operations cancelled_not_started
//   kill → receipt:          the stop receipt is issued by the barrier engine (cancel + effect check
//                            of the 50 in-flight operations against the provider, quiet period 0)
// Baseline, same run: a minimal durable write (BEGIN, a one-row UPDATE, COMMIT) on its own connection,
// the floor of any dispatch stop that is committed before it is reported.
// The engine and the provider run in this process (real HTTP, real PostgreSQL). Reported, never asserted.
import os from "node:os";
import pg from "pg";
import { performance } from "node:perf_hooks";
import type { BenchSection } from "./lib/section";
import { ms, type BenchTable } from "./lib/report";
import { percentile } from "./lib/measure";
import { killRun } from "../lib/modules/stop/kill";
import { runBarrierWorker } from "../lib/modules/stop/engine/worker";
import { startSimProvider } from "../lib/modules/stop/providers/sim-server";
import { newId } from "../lib/platform/ids";
import { sleep } from "../lib/platform/wait";

const RUNS = 100;
const QUEUED = 10_000;
const RUNNING = 50;
const TARGET_DISPATCH_MS = 100;

export async function buildTree(db: pg.Client, teamId: string, simUrl: string, round: number) {
  const root = newId("run");
  const runs: { id: string; parent: string | null; path: string[] }[] = [{ id: root, parent: null, path: [root] }];
  for (let c = 0; c < 9; c++) {
    const child = newId("run");
    runs.push({ id: child, parent: root, path: [root, child] });
    for (let g = 0; g < 10; g++) {
      const gc = newId("run");
      runs.push({ id: gc, parent: child, path: [root, child, gc] });
    }
  }
  await db.query(
    `INSERT INTO runs (id, team_id, task_id, parent_run_id, root_run_id, path, depth, title)
     SELECT r.id, $1, 'bench-kill', r.parent, $2, string_to_array(r.path, ','), cardinality(string_to_array(r.path, ',')) - 1, 'bench'
       FROM unnest($3::text[], $4::text[], $5::text[]) AS r(id, parent, path)`,
    [teamId, root, runs.map((r) => r.id), runs.map((r) => r.parent), runs.map((r) => r.path.join(","))],
  );
  await db.query(
    `INSERT INTO leases (id, team_id, run_id, path, scopes, valid_until)
     SELECT 'lease_' || r.id, $1, r.id, ARRAY['lease_' || r.id], '{*}', now() + interval '1 hour' FROM unnest($2::text[]) AS r(id)`,
    [teamId, runs.map((r) => r.id)],
  );
  await db.query(
    `INSERT INTO operations (id, team_id, operation_id, run_id, lease_id, epoch_stamp, kind, tool, state)
     SELECT 'op_q' || $3 || '_' || g, $1, 'queued-' || $3 || '-' || g, ids[1 + g % cardinality(ids)], 'lease_' || ids[1 + g % cardinality(ids)], 1,
            'queued', 'checks.compat', 'queued'
       FROM generate_series(0, $4 - 1) AS g, (SELECT $2::text[] AS ids) AS t`,
    [teamId, runs.map((r) => r.id), `${round}${root.slice(-6)}`, QUEUED],
  );
  const sim = await Promise.all(
    Array.from({ length: RUNNING }, (_, i) =>
      fetch(`${simUrl}/jobs`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ jobId: `bench-${root}-${i}`, mode: "cancel_cleanly" }),
      }),
    ),
  );
  if (sim.some((r) => !r.ok)) throw new Error("provider-sim refused a job");
  const leaves = runs.slice(-90);
  await db.query(
    `INSERT INTO operations (id, team_id, operation_id, run_id, lease_id, epoch_stamp, kind, tool, state, provider_name, provider_job_id, started_at)
     SELECT 'op_r' || $3 || '_' || g, $1, 'running-' || $3 || '-' || g, ids[1 + g % cardinality(ids)], 'lease_' || ids[1 + g % cardinality(ids)], 1,
            'call', 'deployment.reserve_preview', 'running', 'deploy-sim', 'bench-' || $4 || '-' || g, now()
       FROM generate_series(0, $5 - 1) AS g, (SELECT $2::text[] AS ids) AS t`,
    [teamId, leaves.map((r) => r.id), `${round}${root.slice(-6)}`, root, RUNNING],
  );
  return root;
}

export const killSection: BenchSection = {
  name: "kill",
  title: `kill a tree of ${RUNS} runs with ${QUEUED} queued and ${RUNNING} running operations`,
  async run(ctx) {
    const rounds = Math.max(1, Math.min(5, Math.round(ctx.iterations / 1000) + 2));
    const db = new pg.Client({ connectionString: ctx.url });
    await db.connect();
    const sim = await startSimProvider({ port: 0 });
    const teamId = newId("team");
    // Quiet period 0 (the team's own floor too): the bench measures settling and issuing, not waiting.
    await db.query(`INSERT INTO teams (id, slug, name, quiet_period_ms) VALUES ($1, $2, 'Bench kill', 0)`, [teamId, teamId.toLowerCase()]);
    await db.query(
      `INSERT INTO providers (id, team_id, name, kind, cancel_url, status_url, timeout_ms, settle_deadline_ms, quiet_period_seconds, rollback_owner)
       VALUES ($1, $2, 'deploy-sim', 'simulated', $3, $4, 5000, 10000, 0, 'release-oncall')`,
      [newId("prov"), teamId, `${sim.url}/jobs/{providerJobId}/cancel`, `${sim.url}/jobs/{providerJobId}/effect`],
    );
    const ac = new AbortController();
    const engine = runBarrierWorker({ teamId, signal: ac.signal, pollMs: 1000, listen: true });
    const principal = { type: "system", name: "bench" } as const;
    const dispatch: number[] = [];
    const cancelled: number[] = [];
    const baseline: number[] = [];
    const receipt: number[] = [];
    const settle: number[] = [];
    const details: unknown[] = [];
    try {
      for (let round = 0; round < rounds; round++) {
        const root = await buildTree(db, teamId, sim.url, round);
        await db.query("ANALYZE operations");
        for (let i = 0; i < 5; i++) {
          const b0 = performance.now();
          await db.query("BEGIN");
          await db.query("UPDATE runs SET title = title WHERE id = $1", [root]);
          await db.query("COMMIT");
          baseline.push(performance.now() - b0);
        }
        const t0 = Date.now();
        const p0 = performance.now();
        let stopped = NaN;
        const { barrierId } = await killRun(principal, root, "bench", null, { onDispatchStopped: () => (stopped = performance.now()) });
        cancelled.push(performance.now() - p0);
        dispatch.push(stopped - p0);
        for (;;) {
          const r = await db.query<{
            verified_at: Date;
            decision: string;
            last_settled_at: Date | null;
            queued_cancelled: number;
            in_flight: number;
          }>(
            `SELECT s.verified_at, s.decision, b.last_settled_at, b.queued_cancelled, b.in_flight
               FROM stop_receipts s JOIN barriers b ON b.id = s.barrier_id WHERE s.barrier_id = $1 AND s.version = 1`,
            [barrierId],
          );
          const row = r.rows[0];
          if (row) {
            receipt.push(row.verified_at.getTime() - t0);
            settle.push((row.last_settled_at?.getTime() ?? t0) - t0);
            details.push({ barrierId, ...row });
            if (row.decision !== "stopped_and_quiet" || row.queued_cancelled !== QUEUED || row.in_flight !== RUNNING) {
              throw new Error(`unexpected barrier outcome: ${JSON.stringify(row)}`);
            }
            break;
          }
          await sleep(20);
        }
        ctx.log(
          `kill round ${round + 1}/${rounds}: dispatch stopped ${ms(dispatch.at(-1)!)} ms, queued cancelled ${ms(cancelled.at(-1)!)} ms, receipt ${receipt.at(-1)} ms`,
        );
      }
    } finally {
      ac.abort();
      await engine;
      await sim.close();
      await db.end();
    }
    const sorted = (a: number[]) => [...a].sort((x, y) => x - y);
    const row = (name: string, a: number[]) => [name, ms(percentile(sorted(a), 50)), ms(Math.max(...a)), String(a.length)];
    const table: BenchTable = {
      title: `Kill → dispatch stopped and → stop receipt (${RUNS} runs, ${QUEUED} queued, ${RUNNING} running, quiet period 0)`,
      columns: ["measure", "p50 ms", "max ms", "rounds"],
      rows: [
        row("kill → dispatch stopped (first transaction committed: every gate denies)", dispatch),
        row("kill → queued work cancelled (second transaction committed; killRun returned)", cancelled),
        row("kill → last in-flight operation settled", settle),
        row("kill → stop receipt issued", receipt),
        row("baseline: a one-row UPDATE committed (BEGIN, UPDATE, COMMIT)", baseline),
      ],
      notes: [
        `target: dispatch stopped p50 ≤ ${TARGET_DISPATCH_MS} ms — ${percentile(sorted(dispatch), 50) <= TARGET_DISPATCH_MS ? "met" : "NOT met"} (p50 ${ms(percentile(sorted(dispatch), 50))} ms); ` +
          `${(percentile(sorted(dispatch), 50) / percentile(sorted(baseline), 50)).toFixed(1)}× the baseline's p50, ` +
          `${(percentile(sorted(dispatch), 50) / percentile(sorted(cancelled), 50)).toFixed(2)}× the whole kill call (queued work cancelled too)`,
        "every round: decision stopped_and_quiet, 10 000 operations cancelled_not_started, 50 settlements cancelled_without_effect",
        `${os.cpus().length} CPU(s), load average ${os
          .loadavg()
          .map((x) => x.toFixed(1))
          .join(" / ")} when done, ${ctx.server}; engine and simulated provider in the bench process`,
      ],
    };
    return { tables: [table], data: { rounds, dispatch, cancelled, settle, receipt, baseline, details } };
  },
};
