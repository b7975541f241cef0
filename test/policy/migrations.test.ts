// The policy migrations keep what was written before them: a database migrated up to the migration before
// one, with data in the earlier form, is migrated the rest of the way and read back.
import { cpSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import pg from "pg";
import { afterAll, expect, inject, test } from "vitest";
import { withDatabase } from "../../lib/platform/db/fresh-database";
import { migrate, MIGRATIONS_DIR } from "../../lib/platform/db/migrate";

const testUrl = inject("databaseUrl");
const withDb = (db: string) => withDatabase(testUrl, db);
const made: { db: string; dir: string }[] = [];

async function on<T>(url: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

/** A new database with every migration before `change` applied: its URL. */
async function migratedUpTo(change: string): Promise<string> {
  const db = `quiesce_mig_${process.pid}_${made.length}_${Date.now().toString(36)}`;
  const dir = mkdtempSync(path.join(tmpdir(), "quiesce-mig-"));
  made.push({ db, dir });
  await on(withDb("postgres"), (c) => c.query(`CREATE DATABASE "${db}"`));
  const all = readdirSync(MIGRATIONS_DIR);
  expect(all).toContain(change);
  for (const f of all) if (f < change) cpSync(path.join(MIGRATIONS_DIR, f), path.join(dir, f), { recursive: true });
  const url = withDb(db);
  await migrate(url, () => {}, dir);
  return url;
}

afterAll(async () => {
  for (const { db, dir } of made) {
    rmSync(dir, { recursive: true, force: true });
    await on(withDb("postgres"), (c) => c.query(`DROP DATABASE IF EXISTS "${db}" WITH (FORCE)`));
  }
});

test("lists written as JSON before the change read back as rows, every field and the order kept", async () => {
  const url = await migratedUpTo("20261207120000_gate_policy_rows");

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

test("a team's enabled version gets its rules on the team row, in the gate's order; a team without a policy none", async () => {
  const url = await migratedUpTo("20261208090000_policy_rules_on_team");
  await on(url, async (c) => {
    await c.query(`INSERT INTO teams (id, slug, name) VALUES ('t1', 't1', 'T1'), ('t2', 't2', 'T2')`);
    await c.query(`INSERT INTO policy_versions (team_id, version, document, redact_keys, created_by)
                   VALUES ('t1', 1, '{}', '{}', 'x'), ('t1', 2, '{}', '{}', 'x'), ('t2', 1, '{}', '{}', 'x')`);
    await c.query(`INSERT INTO policy_rules (team_id, version, position, name, effect, tool_regex, budget_unit, budget_limit, budget_per, budget_window)
                   VALUES ('t1', 1, 0, 'old', 'deny', NULL, NULL, NULL, NULL, NULL),
                          ('t1', 2, 0, 'usd', 'budget', NULL, 'usd', 5, 'run_tree', 'minute'),
                          ('t1', 2, 1, 'no-deploys', 'deny', '^deployment\\..*$', NULL, NULL, NULL, NULL),
                          ('t1', 2, 2, 'calls', 'budget', NULL, 'calls', 100, 'team', 'total'),
                          ('t2', 1, 0, 'unused', 'allow', NULL, NULL, NULL, NULL, NULL)`);
    await c.query(`UPDATE teams SET policy_version = 2 WHERE id = 't1'`);
  });

  await migrate(url);
  const rows = await on(
    url,
    async (c) =>
      (
        await c.query<{ id: string; version: number | null; rules: unknown[] | null }>(
          `SELECT t.id, t.policy_version AS version,
                  (SELECT json_agg(json_build_array(r.name, r.effect, r.tool_regex, r.budget_unit, r.budget_limit::text, r.budget_per, r.budget_window)
                                   ORDER BY r.ordinality)
                     FROM unnest(t.policy_rules) WITH ORDINALITY AS r) AS rules
             FROM teams t ORDER BY t.id`,
        )
      ).rows,
  );
  expect(rows).toEqual([
    {
      id: "t1",
      version: 2,
      rules: [
        ["no-deploys", "deny", "^deployment\\..*$", null, null, null, null],
        ["calls", "budget", null, "calls", "100.000000000000000000000000000000", "team", "total"],
        ["usd", "budget", null, "usd", "5.000000000000000000000000000000", "run_tree", "minute"],
      ],
    },
    { id: "t2", version: null, rules: null },
  ]);
});
