// The migration that turns operations.budget_reservations from JSON objects into rows of quiesce_reservation
// keeps every list: a database migrated up to the migration before it, with lists written in the JSON form,
// is migrated the rest of the way and read back field by field, in order.
import { cpSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import pg from "pg";
import { afterAll, expect, inject, test } from "vitest";
import { migrate, MIGRATIONS_DIR } from "../../lib/platform/db/migrate";

const CHANGE = "20261207120000_gate_policy_rows";
const testUrl = inject("databaseUrl");
const name = `quiesce_resv_mig_${process.pid}_${Date.now().toString(36)}`;
const dir = mkdtempSync(path.join(tmpdir(), "quiesce-resv-mig-"));
const withDb = (db: string) => Object.assign(new URL(testUrl), { pathname: `/${db}` }).toString();

async function on<T>(url: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  await on(withDb("postgres"), (c) => c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`));
});

test("lists written as JSON before the change read back as rows, every field and the order kept", async () => {
  await on(withDb("postgres"), (c) => c.query(`CREATE DATABASE "${name}"`));
  const url = withDb(name);
  const all = readdirSync(MIGRATIONS_DIR);
  expect(all).toContain(CHANGE);
  for (const f of all) if (f < CHANGE) cpSync(path.join(MIGRATIONS_DIR, f), path.join(dir, f), { recursive: true });
  await migrate(url, () => {}, dir);

  const held = { budget: "usd", scopeKey: "run_root", windowStart: "1970-01-01T00:00:00+00:00", unit: "usd", amount: 0.4, state: "held" };
  const settled = {
    budget: "calls",
    scopeKey: "-",
    windowStart: "2026-12-06T10:31:00+00:00",
    unit: "calls",
    amount: 1,
    state: "settled",
    actual: 2,
    settledAt: "2026-12-06T10:31:05.5+00:00",
  };
  const released = { ...held, budget: "tokens", unit: "tokens", amount: 1200, state: "released", releaseCause: "cancelled_not_started" };
  await on(url, async (c) => {
    await c.query(`INSERT INTO teams (id, slug, name) VALUES ('t1', 't1', 'T1')`);
    await c.query(`INSERT INTO runs (id, team_id, task_id, root_run_id, path) VALUES ('run_root', 't1', 'task', 'run_root', '{run_root}')`);
    for (const [id, list] of [
      ["op_a", [settled, held]],
      ["op_b", [released]],
      ["op_c", null],
    ] as const)
      await c.query(
        `INSERT INTO operations (id, team_id, operation_id, run_id, epoch_stamp, kind, tool, state, budget_reservations)
         VALUES ($1, 't1', $1, 'run_root', 1, 'call', 'x', 'running', $2::jsonb)`,
        [id, list === null ? null : JSON.stringify(list)],
      );
  });

  await migrate(url);
  const rows = await on(url, async (c) => {
    await c.query("SET TIME ZONE 'UTC'");
    const r = await c.query<Record<string, string | null>>(
      `SELECT o.id, r.ordinality::int AS n, r.budget, r.scope_key, r.window_start::text AS window_start, r.unit, r.amount::text AS amount,
              r.state, r.actual::text AS actual, r.release_cause, r.settled_at::text AS settled_at,
              pg_typeof(o.budget_reservations)::text AS type
         FROM operations o LEFT JOIN LATERAL unnest(o.budget_reservations) WITH ORDINALITY
              AS r ON true
        ORDER BY o.id, r.ordinality`,
    );
    return r.rows;
  });
  const common = { type: "quiesce_reservation[]" };
  expect(rows).toEqual([
    {
      ...common,
      id: "op_a",
      n: 1,
      budget: "calls",
      scope_key: "-",
      window_start: "2026-12-06 10:31:00+00",
      unit: "calls",
      amount: "1",
      state: "settled",
      actual: "2",
      release_cause: null,
      settled_at: "2026-12-06 10:31:05.5+00",
    },
    {
      ...common,
      id: "op_a",
      n: 2,
      budget: "usd",
      scope_key: "run_root",
      window_start: "1970-01-01 00:00:00+00",
      unit: "usd",
      amount: "0.4",
      state: "held",
      actual: null,
      release_cause: null,
      settled_at: null,
    },
    {
      ...common,
      id: "op_b",
      n: 1,
      budget: "tokens",
      scope_key: "run_root",
      window_start: "1970-01-01 00:00:00+00",
      unit: "tokens",
      amount: "1200",
      state: "released",
      actual: null,
      release_cause: "cancelled_not_started",
      settled_at: null,
    },
    {
      ...common,
      id: "op_c",
      n: null,
      budget: null,
      scope_key: null,
      window_start: null,
      unit: null,
      amount: null,
      state: null,
      actual: null,
      release_cause: null,
      settled_at: null,
    },
  ]);
});
