// Gate decisions against bare single-row PostgreSQL round trips, same database, same run, same driver
// (node-postgres, one connection per worker, named prepared statements). Each gate call is a NEW
// operation, so every decision does the full work: authenticate the key, take the shared tree lock,
// read the ancestry, decide, insert the operation and the gate_decisions row.
// Target: gate p50 within 2× of the INSERT … RETURNING baseline. Reported, never asserted.
import os from "node:os";
import pg from "pg";
import type { BenchSection } from "./lib/section";
import { measure, type Op, type Stats } from "./lib/measure";
import { cpuMeter } from "./lib/cpu";
import { ms, ratio, us, type BenchTable } from "./lib/report";
import { gateBatcher, gateCheck } from "../lib/modules/gate/statement";
import { setting } from "../lib/platform/config";
import { createApiKey } from "../lib/modules/keys/api-keys";
import { ensureTeam } from "../lib/modules/members/admin-directory";
import { createRun } from "../lib/modules/runs/register/create-run";
import { hashKeySecret } from "../lib/platform/auth/api-key";
import { newId } from "../lib/platform/ids";
import { policyGateAb } from "./gate-policy";

const SYSTEM = { type: "system", name: "bench" } as const;
const TARGET_RATIO = 2;
/** The throughput target: the batched gate at the widest concurrency ≥ this × the INSERT's. */
const TARGET_THROUGHPUT = 0.5;
/** The INSERT baseline's and the batched gate's segments above concurrency 1 (see where it is used). */
const RATIO_ORDER = ["insert", "batched", "batched", "insert", "batched", "insert", "insert", "batched"] as const;
/** Where the generic-plan and hold A/Bs run: small batches (concurrency 4) and the widest concurrency. */
const abConcurrencies = (maxC: number) => [...new Set([Math.min(4, maxC), maxC])];
/** Each measure's throughput, rounded, comma-separated (the rounds and segments the verdicts list). */
const rates = (xs: Stats[]) => xs.map((s) => Math.round(s.perSecond)).join(", ");

interface Worker {
  client: pg.Client;
  runId: string;
  leaseId: string;
  epoch: number;
  pkRunId: string;
}

async function setup(url: string, workers: number) {
  const team = (await ensureTeam(SYSTEM, { slug: `bench-${process.pid}`, name: "Bench" })).team;
  const key = await createApiKey(SYSTEM, { teamId: team.id, kind: "agent", name: "bench agent" });
  const keyHash = hashKeySecret(key.secret);
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  // The INSERT baseline's table: bench-only, in the bench's throwaway database.
  await admin.query(
    `CREATE TABLE bench_baseline (id BIGSERIAL PRIMARY KEY, k TEXT NOT NULL, v TEXT, at TIMESTAMPTZ(3) NOT NULL DEFAULT now())`,
  );
  // Both the INSERT baseline and the gate commit a write, so the commit settings shape both figures.
  const settings = (
    await admin.query<{ v: string; sc: string; fs: string }>(
      "SELECT current_setting('server_version') AS v, current_setting('synchronous_commit') AS sc, current_setting('fsync') AS fs",
    )
  ).rows[0]!;
  const version = `${settings.v} (synchronous_commit=${settings.sc}, fsync=${settings.fs})`;
  await admin.end();
  const list: Worker[] = [];
  for (let i = 0; i < workers; i++) {
    // One run per worker: concurrent agents on separate runs, as in a fleet.
    const run = await createRun(SYSTEM, { taskId: `bench-${i}`, teamId: team.id });
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    list.push({ client, runId: run.runId, leaseId: run.leaseId, epoch: run.epoch, pkRunId: run.runId });
  }
  return { keyHash, workers: list, version };
}

function ops(workers: Worker[], keyHash: string, denials: { n: number; last?: string }) {
  const select =
    (w: Worker): Op =>
    async () => {
      await w.client.query({
        name: "bench_select",
        text: "SELECT id, team_id, lifecycle, epoch FROM runs WHERE id = $1",
        values: [w.pkRunId],
      });
    };
  const insert =
    (w: Worker): Op =>
    async () => {
      await w.client.query({
        name: "bench_insert",
        text: "INSERT INTO bench_baseline (k, v) VALUES ($1, $2) RETURNING id",
        values: [w.runId, "x"],
      });
    };
  const gate =
    (w: Worker): Op =>
    async () => {
      const out = await gateCheck(
        { keyHash, runId: w.runId, leaseId: w.leaseId, epoch: w.epoch, operationId: newId("op"), tool: "bench.noop" },
        w.client,
      );
      if (!out.ok || out.decision !== "allow") {
        denials.n++;
        denials.last = JSON.stringify(out);
      }
    };
  // As the API process asks: gateCheck on the shared gate pool, where concurrent calls are decided in
  // batches (docs/gate.md#batches). Each worker is still one caller with its own run.
  const batched =
    (w: Worker): Op =>
    async () => {
      const out = await gateCheck({
        keyHash,
        runId: w.runId,
        leaseId: w.leaseId,
        epoch: w.epoch,
        operationId: newId("op"),
        tool: "bench.noop",
      });
      if (!out.ok || out.decision !== "allow") {
        denials.n++;
        denials.last = JSON.stringify(out);
      }
    };
  // The same through a batcher of its own with `inFlight` statements in flight (the A/B below), holding
  // waiting calls for a fuller batch up to `holdMs` (default QUIESCE_GATE_BATCH_HOLD_MS).
  const batchedBy = (inFlight: number, holdMs?: number) => {
    const check = gateBatcher(inFlight, holdMs);
    return (w: Worker): Op =>
      async () => {
        const out = await check({
          keyHash,
          runId: w.runId,
          leaseId: w.leaseId,
          epoch: w.epoch,
          operationId: newId("op"),
          tool: "bench.noop",
        });
        if (!out.ok || out.decision !== "allow") {
          denials.n++;
          denials.last = JSON.stringify(out);
        }
      };
  };
  return { select, insert, gate, batched, batchedBy };
}

export const gateSection: BenchSection = {
  name: "gate",
  title: "Gate decisions vs. single-row PostgreSQL round trips",
  async run(ctx) {
    const maxC = Math.max(...ctx.concurrencies);
    const { keyHash, workers, version } = await setup(ctx.url, maxC);
    const denials = { n: 0 } as { n: number; last?: string };
    const make = ops(workers, keyHash, denials);
    const results: Record<number, Record<"select" | "insert" | "gate" | "batched", Stats>> = {};
    /** The INSERT's and the batched gate's segments, in the order they ran (printed with the ratio). */
    const segments: Record<number, { insert: Stats[]; batched: Stats[] }> = {};
    const ab: {
      fk: Stats[];
      noFk: Stats[];
      fkBatched: Stats[];
      noFkBatched: Stats[];
      generic: Record<number, Stats[]>;
      auto: Record<number, Stats[]>;
    } = { fk: [], noFk: [], fkBatched: [], noFkBatched: [], generic: {}, auto: {} };
    const inFlightAb: Record<number, Stats[]> = { 1: [], 2: [], 3: [], 4: [] };
    const holdAb: Record<string, Stats[]> = {};
    const cpu = await cpuMeter(ctx.url);
    try {
      for (const c of ctx.concurrencies) {
        const ws = workers.slice(0, c);
        const n = ctx.iterations * (c === 1 ? 1 : 2);
        const order = c === 1 ? (["insert", "batched"] as const) : RATIO_ORDER;
        const per = c === 1 ? n : ctx.iterations;
        ctx.log(
          `concurrency ${c}: ${n} calls each for SELECT and the unbatched gate, ${(per * order.length) / 2} for the INSERT and the batched gate …`,
        );
        const select = await cpu.measure("SELECT by primary key", ws.map(make.select), n, ctx.warmup);
        const gate = await cpu.measure("gate decision, one connection per caller", ws.map(make.gate), n, ctx.warmup);
        // The INSERT baseline and the batched gate, whose ratio is the throughput target: above concurrency 1,
        // 4 segments of each, interleaved A B B A B A A B, ctx.iterations calls per segment, so that one
        // fsync stall of a few hundred ms weighs on both alike instead of deciding the ratio
        // (docs/perf-log.md, the entry on measuring in segments).
        const INSERT = "INSERT … RETURNING",
          BATCHED = "gate decision, shared pool (batched)";
        const inserts: Stats[] = [];
        const batches: Stats[] = [];
        const sides = {
          insert: { name: INSERT, op: make.insert, done: inserts },
          batched: { name: BATCHED, op: make.batched, done: batches },
        };
        for (const k of order) {
          const { name, op, done } = sides[k];
          // Full warm-up before each side's first segment; later segments start on warm connections.
          done.push(await cpu.measure(name, ws.map(op), per, done.length === 0 ? ctx.warmup : c));
        }
        const insert = cpu.pooled(inserts);
        const batched = cpu.pooled(batches);
        results[c] = { select, insert, gate, batched };
        segments[c] = { insert: inserts, batched: batches };
      }
      // The batcher's size, measured in the same run: 1, 2, 3 or 4 gate statements in flight (the calls that
      // arrive meanwhile wait and go together), interleaved, at the widest concurrency.
      {
        const ws = workers.slice(0, maxC);
        const sizes = [1, 2, 3, 4] as const;
        const by = Object.fromEntries(sizes.map((k) => [k, ws.map(make.batchedBy(k))]));
        for (let round = 0; round < 2; round++)
          for (const k of round % 2 === 0 ? sizes : [...sizes].reverse())
            inFlightAb[k]!.push(await measure(`gate decision, batched, ${k} in flight`, by[k]!, ctx.iterations, ctx.warmup));
      }
      // The hold (QUIESCE_GATE_BATCH_HOLD_MS) against none, two statements in flight, interleaved, at
      // concurrency 4 and the widest (docs/gate.md#batches).
      for (let round = 0; round < 2; round++)
        for (const c of abConcurrencies(maxC)) {
          const held = workers.slice(0, c).map(make.batchedBy(2));
          const none = workers.slice(0, c).map(make.batchedBy(2, 0));
          for (const [k, cs] of (round % 2 === 0 ? ["held", "none"] : ["none", "held"]).map(
            (k) => [k, k === "held" ? held : none] as const,
          ))
            (holdAb[`${k}:${c}`] ??= []).push(await measure(`gate decision, batched, hold ${k}, c${c}`, cs, ctx.iterations, ctx.warmup));
        }
      // A candidate measured in the same run: the operations → runs foreign key takes a
      // FOR KEY SHARE lock on the run row for every inserted operation. Interleaved A/B at the widest
      // concurrency: with the key, without it, with it again (re-added NOT VALID: new rows are still
      // checked, the old ones are not rescanned), without it again. The database is thrown away after.
      const ws = workers.slice(0, maxC);
      const admin = new pg.Client({ connectionString: ctx.url });
      await admin.connect();
      try {
        for (let round = 0; round < 2; round++) {
          ab.fk.push(await measure("gate decision, operations → runs FK", ws.map(make.gate), ctx.iterations, ctx.warmup));
          ab.fkBatched.push(await measure("gate decision, batched, FK", ws.map(make.batched), ctx.iterations, ctx.warmup));
          await admin.query("ALTER TABLE operations DROP CONSTRAINT operations_run_id_fkey");
          ab.noFkBatched.push(await measure("gate decision, batched, no FK", ws.map(make.batched), ctx.iterations, ctx.warmup));
          ab.noFk.push(await measure("gate decision, no FK", ws.map(make.gate), ctx.iterations, ctx.warmup));
          await admin.query(
            `ALTER TABLE operations ADD CONSTRAINT operations_run_id_fkey FOREIGN KEY (run_id) REFERENCES runs(id) ON DELETE RESTRICT ON UPDATE CASCADE NOT VALID`,
          );
        }
        // The batch function's forced generic plans (20261205003400_gate_batch_generic_plans) against
        // plpgsql's default choice, on the shared pool, where small batches showed the re-planning: at
        // concurrency 4 (batches of about 2) and at the widest. The setting is read at each call, so it
        // takes effect on the pool's existing connections at once.
        const SIG = "quiesce_gate_batch(text[], text[], text[], integer[], text[], text[], text[], integer, integer, jsonb)";
        for (let round = 0; round < 2; round++)
          for (const c of abConcurrencies(maxC)) {
            const cs = workers.slice(0, c).map(make.batched);
            (ab.generic[c] ??= []).push(await measure(`gate decision, batched, generic plans, c${c}`, cs, ctx.iterations, ctx.warmup));
            await admin.query(`ALTER FUNCTION ${SIG} RESET plan_cache_mode`);
            (ab.auto[c] ??= []).push(await measure(`gate decision, batched, plpgsql's choice, c${c}`, cs, ctx.iterations, ctx.warmup));
            await admin.query(`ALTER FUNCTION ${SIG} SET plan_cache_mode = force_generic_plan`);
          }
      } finally {
        await admin.end();
      }
    } finally {
      await Promise.all(workers.map((w) => w.client.end()));
      await cpu.end();
    }
    if (denials.n > 0)
      throw new Error(`${denials.n} gate calls did not answer allow (last: ${denials.last}); the figures would not measure the allow path`);

    const rows: string[][] = [];
    const verdicts: string[] = [];
    for (const c of ctx.concurrencies) {
      const r = results[c]!;
      for (const s of [r.select, r.insert, r.gate, r.batched]) {
        rows.push([
          String(c),
          s.name,
          ms(s.p50),
          ms(s.p99),
          Math.round(s.perSecond).toLocaleString("en-US"),
          ratio(s.p50 / r.insert.p50),
          ratio(s.p50 / r.select.p50),
          us(cpu.of(s)?.serverUs),
          us(cpu.of(s)?.clientUs),
        ]);
      }
      const x = r.gate.p50 / r.insert.p50;
      verdicts.push(
        `concurrency ${c}: gate p50 ${ms(r.gate.p50)} ms = ${ratio(x)} INSERT p50 → ${x <= TARGET_RATIO ? "PASS" : "MISS"} (target ≤ ${TARGET_RATIO}×)`,
      );
      if (c > 1) {
        const cost = cpu.total;
        if (Number.isFinite(cost(r.batched)) && Number.isFinite(cost(r.insert)))
          verdicts.push(
            `concurrency ${c}: CPU per call (server + client) INSERT ${Math.round(cost(r.insert))} µs, gate unbatched ${Math.round(cost(r.gate))} µs, batched ${Math.round(cost(r.batched))} µs → where CPU bounds throughput, batched ≈ ${ratio(cost(r.insert) / cost(r.batched))} the INSERT's (unbatched ${ratio(cost(r.insert) / cost(r.gate))}); unlike the wall-clock figures, this does not depend on what else the machine runs`,
          );
        const t = r.batched.perSecond / r.insert.perSecond;
        verdicts.push(
          `concurrency ${c}: gate throughput on the shared pool (batched) ${Math.round(r.batched.perSecond)}/s = ${ratio(t)} INSERT's ${Math.round(r.insert.perSecond)}/s → ${t >= TARGET_THROUGHPUT ? "PASS" : "MISS"} (throughput target ≥ ${TARGET_THROUGHPUT}×; segments INSERT ${rates(segments[c]!.insert)}, gate ${rates(segments[c]!.batched)}); one connection per caller, unbatched: ${ratio(r.gate.perSecond / r.insert.perSecond)}`,
        );
      }
    }
    const mean = (xs: Stats[], f: (s: Stats) => number) => xs.reduce((a, s) => a + f(s), 0) / xs.length;
    const fkRate = mean(ab.fk, (s) => s.perSecond),
      noFkRate = mean(ab.noFk, (s) => s.perSecond);
    verdicts.push(
      `candidate, concurrency ${maxC}, interleaved A/B/A/B: with the operations → runs FK ${Math.round(fkRate)}/s (p50 ${ms(mean(ab.fk, (s) => s.p50))} ms), without ${Math.round(noFkRate)}/s (p50 ${ms(mean(ab.noFk, (s) => s.p50))} ms) → ${ratio(noFkRate / fkRate)} (${rates(ab.fk.concat(ab.noFk))} per round); batched (the shared pool, as the API process asks): with ${Math.round(mean(ab.fkBatched, (s) => s.perSecond))}/s, without ${Math.round(mean(ab.noFkBatched, (s) => s.perSecond))}/s → ${ratio(mean(ab.noFkBatched, (s) => s.perSecond) / mean(ab.fkBatched, (s) => s.perSecond))} (${rates(ab.fkBatched.concat(ab.noFkBatched))} per round)`,
    );
    /** "concurrency c X/s vs Y/s → ratio (rounds …)" for each A/B concurrency, A's rounds then B's. */
    const abFigures = (rounds: (c: number) => [Stats[], Stats[]]) =>
      abConcurrencies(maxC)
        .map((c) => {
          const [a, b] = rounds(c);
          const ra = mean(a, (s) => s.perSecond),
            rb = mean(b, (s) => s.perSecond);
          return `concurrency ${c} ${Math.round(ra)}/s vs ${Math.round(rb)}/s → ${ratio(ra / rb)} (${rates(a.concat(b))} per round)`;
        })
        .join("; ");
    verdicts.push(
      `candidate kept, interleaved A/B/A/B on the shared pool: quiesce_gate_batch with forced generic plans vs plpgsql's own choice (which re-planned small batches on every call; docs/gate.md#plans): ${abFigures((c) => [ab.generic[c]!, ab.auto[c]!])}`,
    );
    verdicts.push(
      `kept: the batcher's hold (QUIESCE_GATE_BATCH_HOLD_MS=${setting("QUIESCE_GATE_BATCH_HOLD_MS")}: with a statement in flight, waiting calls held for a fuller batch) vs none, 2 in flight, interleaved: ${abFigures((c) => [holdAb[`held:${c}`]!, holdAb[`none:${c}`]!])}`,
    );
    verdicts.push(
      `batcher size, concurrency ${maxC}, interleaved 1/2/3/4/4/3/2/1 statements in flight (default QUIESCE_GATE_BATCH_INFLIGHT=${setting("QUIESCE_GATE_BATCH_INFLIGHT")}): ${(
        [1, 2, 3, 4] as const
      )
        .map((k) => `${k} → ${Math.round(mean(inFlightAb[k]!, (s) => s.perSecond))}/s (p50 ${ms(mean(inFlightAb[k]!, (s) => s.p50))} ms)`)
        .join(", ")}`,
    );
    const table: BenchTable = {
      title: this.title,
      columns: [
        "concurrency",
        "measure",
        "p50 ms",
        "p99 ms",
        "per second",
        "p50 ÷ INSERT p50",
        "p50 ÷ SELECT p50",
        "server CPU µs/call",
        "client CPU µs/call",
      ],
      rows,
      notes: [
        ...verdicts,
        `${ctx.iterations} calls at concurrency 1, ${ctx.iterations * 2} at higher concurrency, after ${ctx.warmup} warm-up calls (at higher concurrency the INSERT and the batched gate ${RATIO_ORDER.length / 2}× ${ctx.iterations} calls each instead, in segments interleaved ${RATIO_ORDER.map((k) => (k === "insert" ? "INSERT" : "gate")).join(", ")}, and pooled); named prepared statements throughout. SELECT, INSERT and "one connection per caller": each worker on its own connection. "Shared pool (batched)": gateCheck as the API process calls it, all workers on the process's gate pool, where calls that arrive while gate statements are in flight are decided together (docs/gate.md#batches).`,
        `PostgreSQL ${version} on ${ctx.server}; Node ${process.version}; ${os.cpus().length} CPUs; load average ${os
          .loadavg()
          .map((l) => l.toFixed(1))
          .join(" ")} at the end.`,
      ],
    };
    // The gate with a policy and a budget beside the policy-free gate, in this same run (docs/policies.md).
    const policy = await policyGateAb(ctx);
    return { tables: [table, policy.table], data: { results, segments, ab, inFlightAb, holdAb, policy: policy.data } };
  },
};
