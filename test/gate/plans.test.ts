// The gate's cached plans stay primary-key lookups when the tables grow under them (docs/gate.md#plans).
// plpgsql caches each statement's plan per connection. On a young database the plans are made while
// `runs` and `leases` hold a handful of rows, and a fleet then registers thousands of runs within the
// minute before autovacuum analyzes anything: a plan that was as cheap as a lookup on the small table
// (a sequential scan of `leases`, an index scan of all of a team's runs filtered by id) then reads every
// row on every decision. Here, on a database of its own: plans made on 16 runs on one connection, 5 000
// more runs and leases inserted (no ANALYZE), and the rows the same connection's next decisions read,
// from pg_stat_xact_user_tables inside their transaction.
import { afterAll, beforeAll, expect, test } from "vitest";
import pg from "pg";
import { freshDatabase, type FreshDatabase } from "../../lib/platform/db/fresh-database";

let db: FreshDatabase;
let client: pg.Client;

beforeAll(async () => {
  db = await freshDatabase({ prefix: "quiesce_plans", embedded: { dataDir: ".quiesce/test-pgdata", port: 54330 } });
  // Every fixture below, and the gate's pool, on this database (this file runs in a process of its own).
  process.env.DATABASE_URL = db.url;
  client = new pg.Client({ connectionString: db.url });
  await client.connect();
});

afterAll(async () => {
  await client?.end();
  const { prisma } = await import("../../lib/platform/db/prisma");
  await prisma().$disconnect();
  await db?.drop();
});

/** Rows of `runs` and `leases` read (sequentially or fetched through an index) by what `fn` runs. */
async function rowsRead(fn: () => Promise<void>): Promise<{ runs: number; leases: number }> {
  // The session's counters not yet flushed to the shared statistics (this and earlier transactions' since
  // the last flush), read before and after inside one transaction: the difference is what `fn` read.
  const counters = async () => {
    const r = await client.query<{ relname: string; n: string }>(
      `SELECT relname, (coalesce(seq_tup_read, 0) + coalesce(idx_tup_fetch, 0))::text AS n
         FROM pg_stat_xact_user_tables WHERE relname IN ('runs', 'leases')`,
    );
    const n = (t: string) => Number(r.rows.find((x) => x.relname === t)?.n ?? 0);
    return { runs: n("runs"), leases: n("leases") };
  };
  await client.query("BEGIN");
  try {
    const before = await counters();
    await fn();
    const after = await counters();
    return { runs: after.runs - before.runs, leases: after.leases - before.leases };
  } finally {
    await client.query("ROLLBACK");
  }
}

test("after 5 000 runs are added under cached plans, a decision still reads a few rows, not the table", async () => {
  const { makeKey, makeRun, makeTeam, opKey } = await import("../support/fixtures");
  const { gateCheckBatch, gateCheck } = await import("../../lib/modules/gate/statement");
  const team = await makeTeam("plans");
  const key = await makeKey(team.teamId, { kind: "agent" });
  const runs: Awaited<ReturnType<typeof makeRun>>[] = [];
  for (let i = 0; i < 16; i++) runs.push(await makeRun(team.teamId));
  const call = (i: number) => ({
    keyHash: key.hash,
    runId: runs[i % runs.length]!.runId,
    leaseId: runs[i % runs.length]!.leaseId,
    epoch: runs[i % runs.length]!.epoch,
    operationId: opKey(),
    tool: "deploy",
  });
  // More than plpgsql's five custom plans per statement, batched and single, so generic plans are cached.
  for (let round = 0; round < 8; round++) {
    const out = await gateCheckBatch([call(0), call(1), call(2), call(3)], client);
    expect(out.every((o) => o.ok && o.decision === "allow")).toBe(true);
    expect(await gateCheck(call(round), client)).toMatchObject({ ok: true, decision: "allow" });
  }

  // The fleet arrives: 5 000 runs of the same team, each with its lease, by copying a fixture run's rows.
  const seed = runs[0]!;
  await client.query(
    `INSERT INTO runs
     SELECT (jsonb_populate_record(r, jsonb_build_object('id', 'run_plan' || g, 'task_id', 'plan-' || g,
               'root_run_id', 'run_plan' || g, 'path', jsonb_build_array('run_plan' || g)))).*
       FROM runs r, generate_series(1, 5000) g WHERE r.id = $1`,
    [seed.runId],
  );
  await client.query(
    `INSERT INTO leases
     SELECT (jsonb_populate_record(l, jsonb_build_object('id', 'lease_plan' || g, 'run_id', 'run_plan' || g,
               'path', jsonb_build_array('lease_plan' || g)))).*
       FROM leases l, generate_series(1, 5000) g WHERE l.id = $1`,
    [seed.leaseId],
  );

  const batch = await rowsRead(async () => {
    const out = await gateCheckBatch([call(0), call(1), call(2), call(3)], client);
    expect(out.every((o) => o.ok && o.decision === "allow")).toBe(true);
  });
  const single = await rowsRead(async () => {
    expect(await gateCheck(call(5), client)).toMatchObject({ ok: true, decision: "allow" });
  });
  // A few rows per call (the run, its ancestry, its lease chain, the foreign key's check), never the table.
  expect(batch.runs).toBeLessThan(100);
  expect(batch.leases).toBeLessThan(100);
  expect(single.runs).toBeLessThan(100);
  expect(single.leases).toBeLessThan(100);
});

// The batch function's plans are forced generic (lib/modules/gate/sql/quiesce_gate_batch.sql): left to its own
// choice, plpgsql re-planned statement 1 of a small batch on every call (docs/design/gate-plans.md).
// A later CREATE OR REPLACE that forgets a SET clause drops the
// setting silently; this fails then.
test("the gate functions carry their plan settings: no sequential scans, and generic plans for the batch", async () => {
  const r = await client.query<{ proname: string; proconfig: string[] | null }>(
    `SELECT proname, proconfig FROM pg_proc WHERE proname IN ('quiesce_gate', 'quiesce_gate_batch') ORDER BY proname`,
  );
  const config = Object.fromEntries(r.rows.map((x) => [x.proname, [...(x.proconfig ?? [])].sort()]));
  expect(config).toEqual({
    quiesce_gate: ["enable_seqscan=off"],
    quiesce_gate_batch: ["enable_seqscan=off", "plan_cache_mode=force_generic_plan"],
  });
});
