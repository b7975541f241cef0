// BullMQ on the real Redis (REDIS_URL), guarded: the same contract as pg-boss — stamped, registered
// jobs; admission at dequeue; the barrier removing jobs from the queue; abort through the token; a
// held job given back to the queue without spending an attempt. With CI set and no Redis: FAIL.
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { Queue, type Worker } from "bullmq";
import type { Redis } from "ioredis";
import { makeWorld, type World } from "../api/fixtures";
import { prisma } from "../../lib/platform/db/prisma";
import { killRun } from "../../lib/modules/stop/kill";
import { pauseRun, resumeRun } from "../../lib/modules/runs/lifecycle";
import { closeControlListener } from "../../lib/modules/stop/abort/listener";
import { gateRecheck, listenFeed } from "../../lib/modules/stop/abort";
import { WorkerGuard, type GuardOutcome, type WorkerGuardOptions } from "../../lib/agent/sdk/worker";
import { enqueueBullMQ, guardBullMQWorker, redisConnection } from "../../lib/agent/queues/bullmq";
import type { Enqueued } from "../../lib/agent/queues/enqueue";
import type { Principal } from "../../lib/platform/auth/principal";
import { requireRedis } from "./support/redis";
import { waitForValue } from "../../lib/platform/wait";

const redisOk = await requireRedis();
const SYSTEM: Principal = { type: "system", name: "test" };

describe.skipIf(!redisOk)("BullMQ guard (real Redis)", () => {
  let w: World;
  let conn: Redis;
  const closers: (() => Promise<unknown>)[] = [];
  beforeAll(async () => {
    w = await makeWorld();
    conn = redisConnection();
  });
  afterAll(async () => {
    for (const c of closers.reverse()) await c().catch(() => {});
    conn?.disconnect();
    await closeControlListener();
    await w?.close();
  });

  function newGuard(extra: Partial<WorkerGuardOptions> = {}) {
    const reader = w.client(w.a.keys.agent);
    return new WorkerGuard({
      client: w.client(w.a.keys.worker),
      feed: listenFeed({ resolveRoot: async (id) => (await reader.getRun(id)).rootRunId }),
      recheck: gateRecheck(w.a.keys.worker),
      ...extra,
    });
  }
  function queue(prefix: string) {
    const q = new Queue(`${prefix}-${Date.now().toString(36)}`, { connection: conn });
    closers.push(async () => {
      await q.obliterate({ force: true }).catch(() => {});
      await q.close();
    });
    return q;
  }
  function worker<T>(
    q: Queue,
    guard: WorkerGuard,
    handler: Parameters<typeof guardBullMQWorker<T, unknown>>[2],
    extra: Partial<Parameters<typeof guardBullMQWorker>[3]> = {},
  ): Worker {
    const wk = guardBullMQWorker<T, unknown>(q.name, guard, handler, { connection: redisConnection(), ...extra });
    closers.push(() => wk.close(true));
    return wk;
  }
  async function authority() {
    const r = await w.client(w.a.keys.agent).createRun({ taskId: "release-payments-8bc911d" });
    return { runId: r.runId, leaseId: r.leaseId, epoch: r.epoch };
  }
  const op = (operationId: string) =>
    prisma().operation.findUniqueOrThrow({ where: { teamId_operationId: { teamId: w.a.teamId, operationId } } });
  const until = waitForValue;

  test("jobs are registered operations (jobId = operationId) carrying their stamp; allowed jobs run", async () => {
    const q = queue("checks");
    const auth = await authority();
    const producer = w.client(w.a.keys.agent);
    const a = await enqueueBullMQ(q, producer, { authority: auth, tool: "db.compatibility_check", payload: { n: 1 } });
    const b = await enqueueBullMQ(q, producer, { authority: auth, tool: "db.compatibility_check", payload: { n: 2 }, delayMs: 300 });
    expect(await op(a.operationId)).toMatchObject({ kind: "queued", providerName: `bullmq:${q.name}`, providerJobId: a.operationId });
    expect(await op(b.operationId)).toMatchObject({ kind: "scheduled", state: "scheduled" });
    expect((await q.getJob(a.jobId))?.data.quiesce).toMatchObject({ runId: auth.runId, epoch: auth.epoch, operationId: a.operationId });
    const seen: number[] = [];
    worker<{ n: number }>(q, newGuard(), async (p) => {
      seen.push(p.n);
      return "ok";
    });
    await until(
      () => Promise.all([op(a.operationId), op(b.operationId)]),
      (ops) => ops.every((o) => o.state === "succeeded"),
    );
    expect(seen.sort()).toEqual([1, 2]);
  });

  test("kill with a full queue: the barrier removes the waiting jobs from BullMQ; re-delivered copies never start", async () => {
    const q = queue("full");
    const auth = await authority();
    const producer = w.client(w.a.keys.agent);
    const jobs: Enqueued[] = [];
    for (let i = 0; i < 6; i++) jobs.push(await enqueueBullMQ(q, producer, { authority: auth, tool: "ticket.update", payload: { i } }));
    const stamps = await Promise.all(jobs.map(async (j) => (await q.getJob(j.jobId))!.data));
    await killRun(SYSTEM, auth.runId, "wrong commit detected");
    await until(
      () => Promise.all(jobs.map((j) => q.getJob(j.jobId))),
      (found) => found.every((x) => !x),
    );
    for (const j of jobs) expect((await op(j.operationId)).state).toBe("cancelled_not_started");
    // A producer that did not hear about the kill puts the same stamped work back: still nothing runs.
    for (const [i, data] of stamps.entries()) await q.add("ticket.update", data, { jobId: `${jobs[i]!.jobId}-again` });
    const guard = newGuard();
    let started = 0;
    const outcomes: unknown[] = [];
    worker(
      q,
      guard,
      async () => {
        started++;
      },
      { onOutcome: (_s, o) => outcomes.push(o) },
    );
    await until(
      async () => outcomes.length,
      (n) => n === jobs.length,
    );
    expect(started).toBe(0);
    expect(guard.counts.snapshot()).toEqual({ discarded_killed: jobs.length });
  });

  test("a running processor is aborted through its token when the run is killed", async () => {
    const q = queue("long");
    const auth = await authority();
    const j = await enqueueBullMQ(q, w.client(w.a.keys.agent), { authority: auth, tool: "deployment.reserve_preview", payload: {} });
    let outcome: GuardOutcome<unknown> | undefined;
    worker(
      q,
      newGuard(),
      (_p, ctx) =>
        new Promise((_, reject) => {
          ctx.signal.addEventListener("abort", () => reject(ctx.signal.reason), { once: true });
        }),
      {
        onOutcome: (_s, o) => {
          outcome = o as GuardOutcome<unknown>;
        },
      },
    );
    await until(
      () => op(j.operationId),
      (o) => o.state === "running",
    );
    await killRun(SYSTEM, auth.runId, "stop");
    await until(
      async () => outcome,
      (o) => o !== undefined,
    );
    expect(outcome).toMatchObject({ status: "aborted_unknown", reason: "killed" });
    const job = await until(
      () => q.getJob(j.jobId),
      (x) => !!x?.finishedOn,
    );
    expect(job?.returnvalue).toMatchObject({ quiesce: "aborted_unknown", reason: "killed" });
  });

  test("a job held past holdMaxMs goes back to the queue (delayed, no attempt spent) and runs after resume", async () => {
    const q = queue("held");
    const auth = await authority();
    await pauseRun(SYSTEM, auth.runId, "inspect");
    const j = await enqueueBullMQ(q, w.client(w.a.keys.agent), { authority: auth, tool: "ticket.update", payload: {} });
    let ran = 0;
    const guard = newGuard({ holdMaxMs: 200 });
    worker(
      q,
      guard,
      async () => {
        ran++;
        return "ran";
      },
      { redeliveryDelayMs: 200 },
    );
    await until(
      async () => guard.counts.get("held"),
      (n) => n >= 2,
    );
    expect(ran).toBe(0);
    expect((await q.getJob(j.jobId))?.attemptsMade ?? 0).toBe(0);
    await resumeRun(SYSTEM, auth.runId, "go");
    await until(
      () => op(j.operationId),
      (o) => o.state === "succeeded",
    );
    expect(ran).toBe(1);
  });
});
