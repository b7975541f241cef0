// A slow database fails requests in bounded time (from the hardening review): statement, lock
// and pool-acquire timeouts on every connection, and the gate answering deny `control_unavailable`
// within its own budget. Tested with a lock held by another session and with pg_sleep.
import pg from "pg";
import { afterAll, beforeAll, expect, test } from "vitest";
import { prisma } from "../../lib/platform/db/prisma";
import { gatePool, pool } from "../../lib/platform/db/pool";
import { databaseUrl } from "../../lib/platform/db/url";
import { makeWorld, raw, type World } from "../api/fixtures";
import { gateCheck } from "../../lib/modules/gate/statement";
import { hashKeySecret } from "../../lib/platform/auth/api-key";

// Read when the pools are created (lazily, after this runs).
process.env.QUIESCE_GATE_DB_BUDGET_MS = "600";
process.env.QUIESCE_DB_STATEMENT_TIMEOUT_MS = "800";
process.env.QUIESCE_DB_ACQUIRE_TIMEOUT_MS = "700";
process.env.QUIESCE_DB_POOL = "2";

let w: World;
let other: pg.Client;
beforeAll(async () => {
  w = await makeWorld();
  other = new pg.Client({ connectionString: databaseUrl() });
  await other.connect();
});
afterAll(async () => {
  await other?.end();
  await w?.close();
});

async function newRun() {
  return w.client(w.a.keys.agent).createRun({ taskId: "slow-db" });
}

/** The answer, or `{ status: 0 }` if none came within `ms`: a request stuck behind the lock fails the
 *  assertions (and the lock is released in `finally`) instead of hanging the test. */
async function within(ms: number, p: Promise<{ status: number; json: any }>): Promise<{ status: number; json: any }> {
  let t: NodeJS.Timeout | undefined;
  const late = new Promise<{ status: number; json: any }>((r) => {
    t = setTimeout(() => r({ status: 0, json: `no answer within ${ms} ms` }), ms);
  });
  try {
    return await Promise.race([p, late]);
  } finally {
    clearTimeout(t);
  }
}

async function timed<T>(fn: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const t0 = performance.now();
  const value = await fn();
  return { ms: performance.now() - t0, value };
}

test("a held tree lock: the gate answers deny control_unavailable within its budget and writes nothing", async () => {
  const run = await newRun();
  await other.query("BEGIN");
  await other.query("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", [run.rootRunId]);
  try {
    const body = { runId: run.runId, leaseId: run.leaseId, epoch: run.epoch, operationId: "slow-1", tool: "t" };
    const { ms, value } = await timed(() => within(12_000, raw(w.server.url, "POST", "/api/v1/gate", { key: w.a.keys.agent, body })));
    expect(value.status).toBe(200);
    expect(value.json).toMatchObject({ decision: "deny", reason: "control_unavailable" });
    expect(ms).toBeLessThan(10_000);
    const admitted = await within(
      12_000,
      raw(w.server.url, "POST", "/api/v1/operations/slow-1/heartbeat", { key: w.a.keys.agent, body: {} }),
    );
    expect([404, 503]).toContain(admitted.status);
  } finally {
    await other.query("ROLLBACK");
  }
  // The cancelled statement committed nothing: no operation, no decision row.
  expect(await prisma().operation.count({ where: { operationId: "slow-1" } })).toBe(0);
  expect(await prisma().gateDecision.count({ where: { operationId: "slow-1" } })).toBe(0);
  // With the lock gone the same request is decided normally.
  const again = await w
    .client(w.a.keys.agent)
    .gate({ runId: run.runId, leaseId: run.leaseId, epoch: run.epoch, operationId: "slow-1", tool: "t" });
  expect(again.decision).toBe("allow");
});

test("a table lock held elsewhere: admit answers deny control_unavailable too", async () => {
  const run = await newRun();
  await w
    .client(w.a.keys.worker)
    .registerOperation({ runId: run.runId, leaseId: run.leaseId, epoch: run.epoch, operationId: "slow-q", kind: "queued", tool: "t" });
  await other.query("BEGIN");
  await other.query("LOCK TABLE operations IN ACCESS EXCLUSIVE MODE");
  try {
    const r = await within(12_000, raw(w.server.url, "POST", "/api/v1/operations/slow-q/admit", { key: w.a.keys.worker, body: {} }));
    expect(r.json).toMatchObject({ decision: "deny", reason: "control_unavailable" });
  } finally {
    await other.query("ROLLBACK");
  }
  expect((await prisma().operation.findFirstOrThrow({ where: { operationId: "slow-q" } })).state).toBe("queued");
});

test("pg_sleep: a statement past the statement timeout is cancelled on both the Prisma and the plain pool", async () => {
  const a = await timed(() =>
    prisma()
      .$queryRawUnsafe("SELECT pg_sleep(5)")
      .then(
        () => "finished",
        (e: Error) => e.message,
      ),
  );
  expect(a.value).toMatch(/statement timeout|canceling statement/i);
  expect(a.ms).toBeLessThan(4000);
  const b = await timed(() =>
    pool()
      .query("SELECT pg_sleep(5)")
      .then(
        () => "finished",
        (e: Error) => e.message,
      ),
  );
  expect(b.value).toMatch(/statement timeout|canceling statement/i);
});

test("a held tree lock under concurrent callers: every batched call, in flight or waiting, answers deny control_unavailable in bounded time", async () => {
  const run = await newRun();
  const keyHash = hashKeySecret(w.a.keys.agent);
  await other.query("BEGIN");
  await other.query("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", [run.rootRunId]);
  let answers: Awaited<ReturnType<typeof gateCheck>>[];
  let ms: number;
  try {
    // the first calls take the statements in flight (stuck on the lock); the rest wait for a batch
    ({ ms, value: answers } = await timed(() =>
      Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          gateCheck({ keyHash, runId: run.runId, leaseId: run.leaseId, epoch: run.epoch, operationId: `slow-batch-${i}`, tool: "t" }),
        ),
      ),
    ));
  } finally {
    await other.query("ROLLBACK");
  }
  for (const a of answers) expect(a).toMatchObject({ ok: true, decision: "deny", reason: "control_unavailable" });
  expect(ms).toBeLessThan(10_000);
  expect(await prisma().gateDecision.count({ where: { operationId: { startsWith: "slow-batch-" } } })).toBe(0);
});

test("pool exhausted (every connection checked out): acquiring fails within the acquire timeout, and the gate denies", async () => {
  const run = await newRun();
  // Check out every gate-pool connection (two) and keep them past the acquire timeout.
  const held = [gatePool().connect(), gatePool().connect()];
  const clients = await Promise.all(held);
  try {
    const { ms, value } = await timed(() =>
      w.client(w.a.keys.agent).gate({ runId: run.runId, leaseId: run.leaseId, epoch: run.epoch, operationId: "slow-2", tool: "t" }),
    );
    expect(value).toMatchObject({ decision: "deny", reason: "control_unavailable" });
    expect(ms).toBeLessThan(5000);
  } finally {
    for (const c of clients) c.release();
  }
  const plain = await Promise.all([pool().connect(), pool().connect()]);
  try {
    const r = await timed(() =>
      pool()
        .query("SELECT 1")
        .then(
          () => "ok",
          (e: Error) => e.message,
        ),
    );
    expect(r.value).toMatch(/timeout/i);
    expect(r.ms).toBeLessThan(4000);
  } finally {
    for (const c of plain) c.release();
  }
});
