// Fleet stop at scale (docs/fleet-stop.md): ROOTS root runs, each with QUEUED_PER_ROOT queued operations.
//   scope committed:   createStop() returns — every gate call of every matching run now denies (the gate
//                      reads the scope inside its statement; test/gate/race.test.ts shows no allow after)
//   fleet receipt:     every barrier complete and the fleet receipt issued (engine in this process, quiet 0)
// and, as the comparison line, the same number of roots stopped by single kills one after another
// (killRun, as POST /runs/{id}/kill does, without HTTP) until every barrier's receipt is issued.
// Reported as figures and ratios, never asserted.
import os from "node:os";
import pg from "pg";
import { performance } from "node:perf_hooks";
import type { BenchSection } from "./lib/section";
import { ms, ratio, type BenchTable } from "./lib/report";
import { createStop, getStop } from "../lib/dal/stops";
import { killRun } from "../lib/dal/kill";
import { runBarrierWorker } from "../lib/barrier/worker";
import { newId } from "../lib/ids";
import { sleep } from "../lib/wait";

const QUEUED_PER_ROOT = 10;

async function buildFleet(db: pg.Client, teamId: string, task: string, roots: number): Promise<string[]> {
  const ids = Array.from({ length: roots }, () => newId("run"));
  await db.query(
    `INSERT INTO runs (id, team_id, task_id, root_run_id, path, depth, title)
     SELECT r.id, $1, $2, r.id, ARRAY[r.id], 0, 'bench fleet' FROM unnest($3::text[]) AS r(id)`,
    [teamId, task, ids],
  );
  await db.query(
    `INSERT INTO leases (id, team_id, run_id, path, scopes, valid_until)
     SELECT 'lease_' || r.id, $1, r.id, ARRAY['lease_' || r.id], '{*}', now() + interval '1 hour' FROM unnest($2::text[]) AS r(id)`,
    [teamId, ids],
  );
  await db.query(
    `INSERT INTO operations (id, team_id, operation_id, run_id, lease_id, epoch_stamp, kind, tool, state)
     SELECT 'op_' || r.id || '_' || g, $1, 'q-' || r.id || '-' || g, r.id, 'lease_' || r.id, 1, 'queued', 'checks.compat', 'queued'
       FROM unnest($2::text[]) AS r(id), generate_series(1, $3) AS g`,
    [teamId, ids, QUEUED_PER_ROOT],
  );
  await db.query("ANALYZE runs; ANALYZE operations");
  return ids;
}

async function receiptsIssued(db: pg.Client, barrierIds: string[]): Promise<number> {
  const r = await db.query<{ n: string }>("SELECT count(DISTINCT barrier_id)::text AS n FROM stop_receipts WHERE barrier_id = ANY ($1)", [
    barrierIds,
  ]);
  return Number(r.rows[0]!.n);
}

export const fleetSection: BenchSection = {
  name: "fleet",
  title: "fleet stop of many runs vs the same runs stopped by single kills",
  async run(ctx) {
    const roots = Math.max(50, Math.min(10_000, Math.round(ctx.iterations / 4)));
    const db = new pg.Client({ connectionString: ctx.url });
    await db.connect();
    const teamId = newId("team");
    const userId = newId("user");
    await db.query(`INSERT INTO teams (id, slug, name, quiet_period_ms) VALUES ($1, $2, 'Bench fleet', 0)`, [teamId, teamId.toLowerCase()]);
    await db.query(`INSERT INTO users (id, email, name) VALUES ($1, $2, 'bench')`, [userId, `${userId}@bench.invalid`]);
    await db.query(`INSERT INTO memberships (id, team_id, user_id, role) VALUES ($1, $2, $3, 'admin')`, [newId("mem"), teamId, userId]);
    const principal = { type: "user", userId, email: `${userId}@bench.invalid`, teamId, role: "admin" } as const;
    const ac = new AbortController();
    const engine = runBarrierWorker({ teamId, signal: ac.signal, pollMs: 500, listen: true });
    try {
      // Fleet stop: one scope.
      await buildFleet(db, teamId, "bench-fleet", roots);
      const t0 = performance.now();
      const stop = await createStop(principal, { action: "kill", filter: { taskPrefix: "bench-fleet" }, reason: "bench", dryRun: false });
      const committed = performance.now() - t0;
      let receiptAt = 0;
      for (;;) {
        const v = await getStop(principal, stop.stopId);
        if (v.receipt) {
          receiptAt = performance.now() - t0;
          if (v.receipt.decision !== "stopped_and_quiet" || v.barriers.complete !== roots)
            throw new Error(`unexpected fleet outcome: ${JSON.stringify(v.barriers)}`);
          break;
        }
        await sleep(50);
      }
      ctx.log(`fleet: ${roots} roots, scope committed ${ms(committed)} ms, fleet receipt ${ms(receiptAt)} ms`);

      // The same fleet, by single kills one after another.
      const ids = await buildFleet(db, teamId, "bench-single", roots);
      const s0 = performance.now();
      const barriers: string[] = [];
      for (const id of ids) barriers.push((await killRun(principal, id, "bench")).barrierId);
      const lastKill = performance.now() - s0;
      while ((await receiptsIssued(db, barriers)) < roots) await sleep(50);
      const singleDone = performance.now() - s0;
      ctx.log(`single kills: ${roots} kills took ${ms(lastKill)} ms, all receipts ${ms(singleDone)} ms`);

      const table: BenchTable = {
        title: `Fleet stop of ${roots} root runs (${roots * QUEUED_PER_ROOT} queued operations) vs ${roots} single kills`,
        columns: ["measure", "ms", "vs fleet stop"],
        rows: [
          ["fleet stop: scope committed → every matching gate call denies", ms(committed), "1.00×"],
          ["single kills: the last kill committed (dispatch stopped for every run)", ms(lastKill), ratio(lastKill / committed)],
          ["fleet stop: every barrier complete and the fleet receipt issued", ms(receiptAt), "1.00×"],
          ["single kills: every barrier's receipt issued", ms(singleDone), ratio(singleDone / receiptAt)],
        ],
        notes: [
          "the fleet's barriers fan out 8 at a time after the scope commits; the single kills run one after another, as a script calling the API would",
          `${os.cpus().length} CPU(s), load average ${os
            .loadavg()
            .map((x) => x.toFixed(1))
            .join(" / ")} when done, ${ctx.server}; engine in the bench process, quiet period 0`,
          "scale with --iterations (roots = iterations / 4, 50–10 000)",
        ],
      };
      return { tables: [table], data: { roots, committed, receiptAt, lastKill, singleDone } };
    } finally {
      ac.abort();
      await engine;
      await db.end();
    }
  },
};
