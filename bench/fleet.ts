// Fleet stop at scale (docs/fleet-stop.md), both ways through the API process (`quiesce api`, real HTTP):
//   N root runs, 10 queued operations each, and N / 20 running ones (one per run) on the simulated
//   deployment provider (cancel cleanly); quiet period 0; the barrier engine in this process.
//   fleet stop:   POST /api/v1/stops {action: kill, filter: {taskPrefix}} once.
//     scope committed: the scope row is visible to another session (a probe polls for it every 2 ms from
//                      the moment the request is sent); the scope's transaction is the decision
//     every gate denies: from that moment, one gate call on each of GATE_PROBES runs spread over the
//                      fleet, all at once (the ≤ 100 ms figure), then a sample of 200 (none may allow)
//     all barriers started / every receipt / the fleet receipt issued (polled from the rows)
//   single kills: the same number of fresh roots stopped by POST /api/v1/runs/{id}/kill, 8 requests at a
//                 time, until every barrier's receipt is issued (--fleet-no-single: left out, for A/B
//                 rounds of the fleet stop alone).
// Size: --fleet-runs N (the docs figure: 10 000, i.e. 100 000 queued and 500 running operations); without
// it, iterations / 4 (50–10 000; 500 for a default `npm run bench`). Reported as figures and ratios, never
// asserted.
import os from "node:os";
import pg from "pg";
import { performance } from "node:perf_hooks";
import type { BenchSection } from "./lib/section";
import { ms, ratio, type BenchTable } from "./lib/report";
import { freePort, startProcess, stopProcess, type Proc } from "./lib/processes";
import { runBarrierWorker } from "../lib/modules/stop/engine/worker";
import { startSimProvider } from "../lib/modules/stop/providers/sim-server";
import { createApiKey } from "../lib/modules/keys/api-keys";
import { ensureMembership, ensureUser } from "../lib/modules/members/admin-directory";
import { gateCheck } from "../lib/modules/gate/statement";
import { hashKeySecret } from "../lib/platform/auth/api-key";
import { fanOutConcurrency } from "../lib/modules/stop/fan-out";
import { newId } from "../lib/platform/ids";
import { setting } from "../lib/platform/config";
import { sleep } from "../lib/platform/wait";

const SYSTEM = { type: "system", name: "bench" } as const;
const QUEUED_PER_ROOT = 10;
const RUNNING_EVERY = 20;
const TARGET_COMMIT_MS = 100;
const TARGET_RECEIPT_MS = 60_000;
const GATE_SAMPLE = 200;
/** Gate calls probing the fleet at once right after the scope commits (each its own connection). */
const GATE_PROBES = 16;
/** A script stopping the fleet by hand, a few requests at a time. */
const SINGLE_KILLS_AT_ONCE = 8;

interface Fleet {
  ids: string[];
  running: number;
}

/** N roots (a lease each), 10 queued operations per root, and a running one on the provider for every 20th root: set-based inserts. */
async function buildFleet(db: pg.Client, teamId: string, task: string, roots: number, simUrl: string): Promise<Fleet> {
  const ids = Array.from({ length: roots }, () => newId("run"));
  await db.query(
    `INSERT INTO runs (id, team_id, task_id, root_run_id, path, depth, title)
     SELECT r.id, $1, $2 || '-' || r.n, r.id, ARRAY[r.id], 0, 'bench fleet' FROM unnest($3::text[]) WITH ORDINALITY AS r(id, n)`,
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
  const runningIds = ids.filter((_, i) => i % RUNNING_EVERY === 0);
  // The provider knows each running job (it answers cancel, then "effect absent, final").
  for (let i = 0; i < runningIds.length; i += 50) {
    const answers = await Promise.all(
      runningIds.slice(i, i + 50).map((id) =>
        fetch(`${simUrl}/jobs`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ jobId: `job-${id}`, mode: "cancel_cleanly" }),
        }),
      ),
    );
    if (answers.some((r) => !r.ok)) throw new Error("provider-sim refused a job");
  }
  await db.query(
    `INSERT INTO operations (id, team_id, operation_id, run_id, lease_id, epoch_stamp, kind, tool, state, provider_name, provider_job_id, started_at)
     SELECT 'op_r_' || r.id, $1, 'r-' || r.id, r.id, 'lease_' || r.id, 1, 'call', 'deployment.reserve_preview', 'running', 'deploy-sim', 'job-' || r.id, now()
       FROM unnest($2::text[]) AS r(id)`,
    [teamId, runningIds],
  );
  await db.query("ANALYZE runs; ANALYZE leases; ANALYZE operations");
  return { ids, running: runningIds.length };
}

interface Progress {
  started: number;
  receipts: number;
  stopIncomplete: number;
}

/** Barriers started and receipts issued for these runs (one statement, polled; the runs' ids go once into a temporary table). */
async function progressOf(db: pg.Client, table: string): Promise<Progress> {
  const r = await db.query<{ started: number; receipts: number; incomplete: number }>(
    `SELECT count(DISTINCT b.id)::int AS started, count(DISTINCT s.barrier_id)::int AS receipts,
            count(DISTINCT s.barrier_id) FILTER (WHERE s.decision = 'stop_incomplete')::int AS incomplete
       FROM ${table} t JOIN barriers b ON b.run_id = t.id LEFT JOIN stop_receipts s ON s.barrier_id = b.id`,
  );
  const row = r.rows[0]!;
  return { started: row.started, receipts: row.receipts, stopIncomplete: row.incomplete };
}

/** Polls until every run has a barrier with a receipt; returns when all barriers were seen started and when all receipts. */
async function followBarriers(db: pg.Client, runIds: string[], t0: number, log: (l: string) => void, label: string) {
  const table = `bench_follow_${label.replace(/\W/g, "_")}`;
  await db.query(`CREATE TEMPORARY TABLE ${table} (id text PRIMARY KEY)`);
  await db.query(`INSERT INTO ${table} SELECT unnest($1::text[])`, [runIds]);
  const every = runIds.length > 2000 ? 500 : 100;
  let allStarted = 0;
  let lastLog = 0;
  for (;;) {
    const p = await progressOf(db, table);
    const now = performance.now() - t0;
    if (!allStarted && p.started >= runIds.length) allStarted = now;
    if (now - lastLog > 5000) {
      lastLog = now;
      log(`${label}: ${(now / 1000).toFixed(0)} s: ${p.started} barriers started, ${p.receipts} receipts`);
    }
    if (p.receipts >= runIds.length) return { allStarted, allReceipts: now, stopIncomplete: p.stopIncomplete };
    await sleep(every);
  }
}

/**
 * Right after the scope is seen committed: one gate call per connection, all at once, on runs spread over
 * the fleet — `firstWaveMs` is when the last of them answered (the "every matching gate denies" figure:
 * each is a gate call that began after the commit) — then the rest of the sample, `via.length` at a time,
 * for the count of allowed calls (must be 0).
 */
async function gateDenies(
  keyHash: string,
  ids: string[],
  via: pg.Client[],
): Promise<{ sampled: number; allowed: number; firstWaveMs: number; lastMs: number; p50: number }> {
  const step = Math.max(1, Math.floor(ids.length / GATE_SAMPLE));
  const sample = ids.filter((_, i) => i % step === 0).slice(0, GATE_SAMPLE);
  let next = 0;
  let allowed = 0;
  let firstWaveMs = 0;
  const took: number[] = [];
  const g0 = performance.now();
  await Promise.all(
    via.map(async (client) => {
      let first = true;
      while (next < sample.length) {
        const runId = sample[next++]!;
        const c0 = performance.now();
        const out = await gateCheck(
          { keyHash, runId, leaseId: `lease_${runId}`, epoch: 1, operationId: newId("op"), tool: "bench.after" },
          client,
        );
        took.push(performance.now() - c0);
        if (first) firstWaveMs = Math.max(firstWaveMs, performance.now() - g0);
        first = false;
        if (out.ok && out.decision === "allow") allowed++;
      }
    }),
  );
  took.sort((x, y) => x - y);
  return { sampled: sample.length, allowed, firstWaveMs, lastMs: performance.now() - g0, p50: took[Math.floor(took.length / 2)] ?? 0 };
}

async function post(url: string, secret: string, body: unknown): Promise<unknown> {
  const res = await fetch(url, {
    method: "POST",
    headers: { authorization: `Bearer ${secret}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${url} answered ${res.status}: ${text.slice(0, 500)}`);
  return JSON.parse(text) as unknown;
}

export const fleetSection: BenchSection = {
  name: "fleet",
  title: "fleet stop of many runs vs the same runs stopped by single kills (through the API)",
  async run(ctx) {
    const roots = ctx.fleetRuns ?? Math.max(50, Math.min(10_000, Math.round(ctx.iterations / 4)));
    const db = new pg.Client({ connectionString: ctx.url });
    await db.connect();
    const probe = new pg.Client({ connectionString: ctx.url });
    await probe.connect();
    const sim = await startSimProvider({ port: 0 });
    const teamId = newId("team");
    // Quiet period 0 (the team's floor too): the bench measures the stop, not the wait.
    await db.query(`INSERT INTO teams (id, slug, name, quiet_period_ms) VALUES ($1, $2, 'Bench fleet', 0)`, [teamId, teamId.toLowerCase()]);
    await db.query(
      `INSERT INTO providers (id, team_id, name, kind, cancel_url, status_url, timeout_ms, settle_deadline_ms, quiet_period_seconds, rollback_owner)
       VALUES ($1, $2, 'deploy-sim', 'simulated', $3, $4, 5000, 10000, 0, 'release-oncall')`,
      [newId("prov"), teamId, `${sim.url}/jobs/{providerJobId}/cancel`, `${sim.url}/jobs/{providerJobId}/effect`],
    );
    const { user } = await ensureUser(SYSTEM, {
      email: `bench-fleet-${process.pid}@bench.invalid`,
      name: "Bench operator",
      passwordHash: null,
    });
    await ensureMembership(SYSTEM, { teamId, userId: user.id, role: "operator" });
    const operator = await createApiKey(SYSTEM, { teamId, kind: "operator", name: "bench fleet operator", userId: user.id });
    const agentKey = hashKeySecret((await createApiKey(SYSTEM, { teamId, kind: "agent", name: "bench fleet agent" })).secret);

    const apiPort = await freePort();
    let api: Proc | undefined;
    const ac = new AbortController();
    let engine: Promise<void> | undefined;
    const gateClients: pg.Client[] = [];
    try {
      api = await startProcess(
        "api",
        ["--conditions=react-server", "--import", "tsx", "bin/quiesce.ts", "api", "--port", String(apiPort)],
        {
          DATABASE_URL: ctx.url,
          QUIESCE_DB_POOL: String(SINGLE_KILLS_AT_ONCE + 4),
          QUIESCE_LOG_LEVEL: "warn",
          NEXTAUTH_SECRET: "bench-only-secret-0123456789abcdef",
          NEXTAUTH_URL: "http://localhost:3000",
          NODE_ENV: "production",
        },
        apiPort,
        "/api/v1/openapi.json",
      );
      engine = runBarrierWorker({ teamId, signal: ac.signal, pollMs: 500, listen: true });
      // The gate probes, connected and warmed (a run outside the fleet) before the stop is sent.
      for (let i = 0; i < GATE_PROBES; i++) {
        const c = new pg.Client({ connectionString: ctx.url });
        await c.connect();
        gateClients.push(c);
      }
      const warm = newId("run");
      await db.query(
        `INSERT INTO runs (id, team_id, task_id, root_run_id, path, depth, title) VALUES ($1, $2, 'bench-warm', $1, ARRAY[$1], 0, 'warm')`,
        [warm, teamId],
      );
      await db.query(
        `INSERT INTO leases (id, team_id, run_id, path, scopes, valid_until) VALUES ('lease_' || $1, $2, $1, ARRAY['lease_' || $1], '{*}', now() + interval '1 hour')`,
        [warm, teamId],
      );
      await gateDenies(
        agentKey,
        Array.from({ length: GATE_PROBES * 2 }, () => warm),
        gateClients,
      );

      // Fleet stop: one scope, through the API.
      const fleet = await buildFleet(db, teamId, "bench-fleet", roots, sim.url);
      ctx.log(`fleet: ${roots} roots, ${roots * QUEUED_PER_ROOT} queued, ${fleet.running} running operations seeded`);
      // The operator previews first (dryRun: the count, nothing written), as the console does; it also
      // keeps the API process's first-request warm-up out of the figure.
      const preview = (await post(`${api.url}/api/v1/stops`, operator.secret, {
        action: "kill",
        filter: { taskPrefix: "bench-fleet-" },
        reason: "bench: fleet stop",
        dryRun: true,
      })) as { matched: number };
      if (preview.matched !== roots) throw new Error(`the preview matched ${preview.matched}, expected ${roots}`);
      let committed = 0;
      let probing = true;
      let gate: Awaited<ReturnType<typeof gateDenies>> | undefined;
      const t0 = performance.now();
      // (a) request sent → scope committed: the scope row is visible to another session. (b) from that
      // moment, every sampled run's gate call, GATE_PROBES at once, while the request is still recording
      // the scope's coverage: the last one's answer is the "every matching gate denies" figure.
      const seen = (async () => {
        while (probing) {
          const r = await probe.query("SELECT 1 FROM stop_scopes WHERE team_id = $1 AND action = 'kill'", [teamId]);
          if (r.rowCount) {
            committed = performance.now() - t0;
            gate = await gateDenies(agentKey, fleet.ids, gateClients);
            return;
          }
          await sleep(2);
        }
      })();
      const created = (await post(`${api.url}/api/v1/stops`, operator.secret, {
        action: "kill",
        filter: { taskPrefix: "bench-fleet-" },
        reason: "bench: fleet stop",
        dryRun: false,
      })) as { stopId: string; matched: number };
      const answered = performance.now() - t0;
      probing = false;
      await seen;
      if (!committed || !gate) throw new Error("the probe never saw the scope commit");
      if (created.matched !== roots) throw new Error(`the scope matched ${created.matched}, expected ${roots}`);
      if (gate.allowed > 0) throw new Error(`${gate.allowed} of ${gate.sampled} gate calls were allowed after the scope committed`);
      // The probes' connections are not needed again: the server's connections are shared with other work.
      await Promise.all(gateClients.splice(0).map((c) => c.end()));
      const f = await followBarriers(db, fleet.ids, t0, ctx.log, "fleet");
      let fleetReceipt = 0;
      for (;;) {
        const r = await db.query<{ completed_at: Date | null; decision: string | null }>(
          "SELECT completed_at, decision::text AS decision FROM stop_scopes WHERE id = $1",
          [created.stopId],
        );
        if (r.rows[0]?.completed_at) {
          fleetReceipt = performance.now() - t0;
          if (r.rows[0].decision !== "stopped_and_quiet") throw new Error(`fleet receipt: ${r.rows[0].decision}`);
          break;
        }
        await sleep(50);
      }
      ctx.log(
        `fleet: scope committed ${ms(committed)} ms, first wave denied ${ms(gate.firstWaveMs)} ms after, ${gate.sampled} denied ${ms(gate.lastMs)} ms after (p50 call ${ms(gate.p50)} ms), answered ${ms(answered)} ms, barriers started ${ms(f.allStarted)} ms, receipts ${ms(f.allReceipts)} ms, fleet receipt ${ms(fleetReceipt)} ms`,
      );

      // The same stop as single kills through the API, SINGLE_KILLS_AT_ONCE at a time (--fleet-no-single
      // leaves them out: for A/B rounds of the fleet stop alone).
      let lastKill = 0;
      let s: Awaited<ReturnType<typeof followBarriers>> | null = null;
      if (!ctx.options?.fleetNoSingle) {
        const single = await buildFleet(db, teamId, "bench-single", roots, sim.url);
        await post(`${api.url}/api/v1/runs/${single.ids[0]}/kill`, operator.secret, { reason: "bench: single kill" });
        const s0 = performance.now();
        let next = 1;
        const killing = Promise.all(
          Array.from({ length: SINGLE_KILLS_AT_ONCE }, async () => {
            while (next < single.ids.length) {
              const id = single.ids[next++]!;
              await post(`${api!.url}/api/v1/runs/${id}/kill`, operator.secret, { reason: "bench: single kill" });
            }
            lastKill = Math.max(lastKill, performance.now() - s0);
          }),
        );
        [, s] = await Promise.all([killing, followBarriers(db, single.ids, s0, ctx.log, "single kills")]);
        ctx.log(`single kills: the last answered at ${ms(lastKill)} ms, receipts ${ms(s.allReceipts)} ms`);
      }
      if (s?.stopIncomplete || f.stopIncomplete)
        throw new Error(`stop_incomplete receipts: fleet ${f.stopIncomplete}, single ${s?.stopIncomplete}`);

      const mark = (x: number, target: number) => (x <= target ? "met" : "NOT met");
      const table: BenchTable = {
        title: `Fleet stop of ${roots.toLocaleString("en")} root runs (${(roots * QUEUED_PER_ROOT).toLocaleString("en")} queued, ${fleet.running} running operations) ${s ? `vs ${roots.toLocaleString("en")} single kills` : "(single kills left out: --fleet-no-single)"}, through the API`,
        columns: ["measure", "ms", "vs fleet stop"],
        rows: [
          ["fleet stop: request sent → scope committed (the decision)", ms(committed), "—"],
          [
            `fleet stop: scope committed → every matching gate call denies (${GATE_PROBES} runs across the fleet, one call each, all at once)`,
            ms(gate.firstWaveMs),
            "1.00×",
          ],
          [
            `fleet stop: scope committed → ${gate.sampled} sampled runs' gate calls all denied (${GATE_PROBES} at a time)`,
            ms(gate.lastMs),
            "—",
          ],
          ["fleet stop: the POST /stops answered (after the coverage is recorded)", ms(answered), "—"],
          [
            "single kills: the last kill answered (dispatch stopped for every run)",
            s ? ms(lastKill) : "—",
            s ? ratio(lastKill / (committed + gate.firstWaveMs)) : "—",
          ],
          ["fleet stop: every barrier started", ms(f.allStarted), "—"],
          ["fleet stop: every barrier complete and the fleet receipt issued", ms(fleetReceipt), "1.00×"],
          ["single kills: every barrier's receipt issued", s ? ms(s.allReceipts) : "—", s ? ratio(s.allReceipts / fleetReceipt) : "—"],
        ],
        notes: [
          `targets: scope committed → every gate denies ≤ ${TARGET_COMMIT_MS} ms — ${mark(gate.firstWaveMs, TARGET_COMMIT_MS)}; fleet receipt ≤ ${TARGET_RECEIPT_MS / 1000} s — ${mark(fleetReceipt, TARGET_RECEIPT_MS)}`,
          `the gate calls start the moment another session sees the scope row (polled every 2 ms from the request): ${gate.sampled} of the fleet's runs, ${GATE_PROBES} connections, ${gate.allowed} allowed, one call's p50 ${ms(gate.p50)} ms; the single kills' ratio is against request sent → last gate denied`,
          `every receipt stopped_and_quiet; the single kills are sent ${SINGLE_KILLS_AT_ONCE} at a time, each answered after its barrier transaction commits; the fan-out starts ${fanOutConcurrency()} batches of ${setting("QUIESCE_FLEET_BATCH_SIZE")} barriers at a time and the engine works on ${setting("QUIESCE_BARRIER_CONCURRENCY")} at once`,
          `${os.cpus().length} CPU(s), load average ${os
            .loadavg()
            .map((x) => x.toFixed(1))
            .join(" / ")} when done, ${ctx.server}; API process and simulated provider local, engine in the bench process, quiet period 0`,
          "size: --fleet-runs N (default iterations / 4, 50–10 000)",
        ],
      };
      return {
        tables: [table],
        data: {
          roots,
          running: fleet.running,
          committed,
          answered,
          fleet: { ...f, fleetReceipt },
          single: s ? { lastKill, ...s } : null,
          gate,
        },
      };
    } finally {
      ac.abort();
      await engine;
      await stopProcess(api);
      await sim.close();
      await probe.end();
      await Promise.all(gateClients.map((c) => c.end()));
      await db.end();
    }
  },
};
