// Can one copy of the gate's decision go (docs/design/sql-sources.md)? The decision is written in SQL twice:
// quiesce_gate (one call, every source, every replay) and the set-based part of quiesce_gate_batch (new
// `gate` calls only; the rest it hands to quiesce_gate). Two ways to drop a copy, each against today's
// code in the same run, interleaved A/B/B/A per round, one connection per worker:
//  - a single call sent as a batch of one, against quiesce_gate (the baseline);
//  - a batch whose every call is quiesce_gate in a loop (no set-based copy), against today's batch.
// Wall-clock rates move with whatever else the machine runs; the database backends' CPU per decision
// (from /proc, when PostgreSQL runs on this host) does not, and decides. Reported, never asserted.
import pg from "pg";
import type { BenchSection } from "./lib/section";
import { measure, type Op, type Stats } from "./lib/measure";
import { cpuMsOf } from "./lib/processes";
import { ms, ratio, type BenchTable } from "./lib/report";
import { callGateBatch, callGateFunction, type GateArgs, type RawAnswer } from "../lib/modules/gate/statement";
import { BREAKER_DEFAULTS } from "../lib/control/breaker";
import { createApiKey } from "../lib/modules/keys/api-keys";
import { ensureTeam } from "../lib/modules/members/admin-directory";
import { createRun } from "../lib/modules/runs/register/create-run";
import { hashKeySecret } from "../lib/platform/auth/api-key";
import { newId } from "../lib/platform/ids";

const SYSTEM = { type: "system", name: "bench" } as const;
const BATCH = 8;
const ROUNDS = 2;
const us = (x: number) => (Number.isFinite(x) ? String(Math.round(x)) : "n/a");

// quiesce_gate_batch without its set-based statement: every call decided by quiesce_gate, in input order.
// Bench-only, in the bench's throwaway database.
const LOOP_FUNCTION = `CREATE FUNCTION bench_gate_batch_loop(
    p_key_hash text[], p_run_id text[], p_lease_id text[], p_epoch integer[], p_operation_id text[], p_tool text[],
    p_new_op_id text[], p_cooldown_ms integer, p_probe_timeout_ms integer
) RETURNS jsonb[] LANGUAGE plpgsql VOLATILE SET enable_seqscan = off AS $fn$
DECLARE v_out jsonb[] := '{}'; k integer;
BEGIN
    FOR k IN 1 .. coalesce(cardinality(p_operation_id), 0) LOOP
        v_out := v_out || quiesce_gate('gate', p_key_hash[k], p_run_id[k], p_lease_id[k], p_epoch[k], p_operation_id[k],
                                       p_tool[k], p_new_op_id[k], p_cooldown_ms, p_probe_timeout_ms, NULL, NULL, NULL);
    END LOOP;
    RETURN v_out;
END;
$fn$`;

interface Worker {
  client: pg.Client;
  pid: number;
  args: () => GateArgs;
}

/** One measure with the workers' backends' CPU per decision (µs; NaN when /proc cannot show them). */
interface Measured {
  stats: Stats;
  serverUs: number;
}

async function loopBatch(calls: GateArgs[], client: pg.Client): Promise<RawAnswer[]> {
  const res = await client.query<{ r: RawAnswer[] }>({
    name: "bench_gate_batch_loop",
    text: "SELECT array_to_json(bench_gate_batch_loop($1, $2, $3, $4, $5, $6, $7, $8, $9)) AS r",
    values: [
      calls.map((c) => c.keyHash),
      calls.map((c) => c.runId),
      calls.map((c) => c.leaseId),
      calls.map((c) => c.epoch),
      calls.map((c) => c.operationId),
      calls.map((c) => c.tool),
      calls.map(() => newId("op")),
      BREAKER_DEFAULTS.coolDownMs,
      BREAKER_DEFAULTS.probeTimeoutMs,
    ],
  });
  return res.rows[0]!.r;
}

export const gateBatchOfOneSection: BenchSection = {
  name: "gate-batch-of-one",
  title: "one copy of the gate decision fewer: a single call as a batch of one, a batch as a loop of single calls",
  async run(ctx) {
    const maxC = Math.max(...ctx.concurrencies);
    const team = (await ensureTeam(SYSTEM, { slug: `bench-b1-${process.pid}`, name: "Bench" })).team;
    const key = await createApiKey(SYSTEM, { teamId: team.id, kind: "agent", name: "bench agent" });
    const keyHash = hashKeySecret(key.secret);
    const admin = new pg.Client({ connectionString: ctx.url });
    await admin.connect();
    await admin.query(LOOP_FUNCTION);
    await admin.end();
    const workers: Worker[] = [];
    for (let i = 0; i < maxC; i++) {
      const run = await createRun(SYSTEM, { taskId: `bench-b1-${i}`, teamId: team.id });
      const client = new pg.Client({ connectionString: ctx.url });
      await client.connect();
      const pid = (await client.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0]!.pid;
      const args = (): GateArgs => ({
        keyHash,
        runId: run.runId,
        leaseId: run.leaseId,
        epoch: run.epoch,
        operationId: newId("op"),
        tool: "bench.noop",
      });
      workers.push({ client, pid, args });
    }
    let denials = 0;
    const check = (rs: RawAnswer[]) => {
      for (const r of rs) if (!r.ok || r.decision !== "allow") denials++;
    };
    const make = {
      single:
        (w: Worker): Op =>
        async () =>
          check([await callGateFunction("gate", w.args(), w.client)]),
      batchOfOne:
        (w: Worker): Op =>
        async () =>
          check(await callGateBatch([w.args()], w.client)),
      setBased:
        (w: Worker): Op =>
        async () =>
          check(await callGateBatch(Array.from({ length: BATCH }, w.args), w.client)),
      loop:
        (w: Worker): Op =>
        async () =>
          check(await loopBatch(Array.from({ length: BATCH }, w.args), w.client)),
    };
    type Kind = keyof typeof make;
    const per = (k: Kind) => (k === "setBased" || k === "loop" ? BATCH : 1);
    const measured = async (k: Kind, ws: Worker[], iterations: number, warmup: number): Promise<Measured> => {
      const cpu = () => ws.reduce((sum, w) => sum + cpuMsOf(w.pid), 0);
      const decisions = (iterations + ws.length * Math.ceil(warmup / ws.length)) * per(k);
      const before = cpu();
      const stats = await measure(`${k}, c${ws.length}`, ws.map(make[k]), iterations, warmup);
      return { stats, serverUs: ((cpu() - before) / decisions) * 1000 };
    };
    const rows: string[][] = [];
    const notes: string[] = [];
    const data: Record<string, Record<Kind, Measured[]>> = {};
    try {
      for (const c of ctx.concurrencies) {
        const ws = workers.slice(0, c);
        const got = (data[c] = { single: [], batchOfOne: [], setBased: [], loop: [] } as Record<Kind, Measured[]>);
        const batchIterations = Math.max(10, Math.round(ctx.iterations / BATCH));
        for (let round = 0; round < ROUNDS; round++) {
          for (const k of ["single", "batchOfOne", "batchOfOne", "single"] as const)
            got[k].push(await measured(k, ws, ctx.iterations, ctx.warmup));
          for (const k of ["setBased", "loop", "loop", "setBased"] as const)
            got[k].push(await measured(k, ws, batchIterations, Math.ceil(ctx.warmup / BATCH)));
        }
        const mean = (k: Kind, f: (m: Measured) => number) => got[k].reduce((sum, m) => sum + f(m), 0) / got[k].length;
        const perSecond = (k: Kind) => mean(k, (m) => m.stats.perSecond) * per(k);
        const cpu = (k: Kind) => mean(k, (m) => m.serverUs);
        const row = (k: Kind, how: string, base: Kind) => [
          String(c),
          how,
          ms(mean(k, (m) => m.stats.p50)),
          String(Math.round(perSecond(k))),
          ratio(perSecond(k) / perSecond(base)),
          us(cpu(k)),
          ratio(cpu(k) / cpu(base)),
        ];
        rows.push(row("single", "quiesce_gate, one call (baseline)", "single"));
        rows.push(row("batchOfOne", "quiesce_gate_batch, a batch of one", "single"));
        rows.push(row("setBased", `quiesce_gate_batch, ${BATCH} calls, set-based (baseline)`, "setBased"));
        rows.push(row("loop", `${BATCH} calls, quiesce_gate in a loop`, "setBased"));
        const rounds = (k: Kind) => got[k].map((m) => Math.round(m.stats.perSecond * per(k))).join(", ");
        notes.push(
          `concurrency ${c}: decisions/s per round — single ${rounds("single")}; batch of one ${rounds("batchOfOne")}; set-based ${rounds("setBased")}; loop ${rounds("loop")}`,
        );
      }
    } finally {
      for (const w of workers) await w.client.end();
    }
    if (denials) throw new Error(`${denials} calls were not allowed: the figures would not measure full decisions`);
    const table: BenchTable = {
      title: "Gate: dropping one copy of the decision",
      columns: ["concurrency", "how", "p50 ms (per statement)", "decisions/s", "× baseline", "server CPU µs / decision", "× baseline"],
      rows,
      notes,
    };
    return { tables: [table], data };
  },
};
