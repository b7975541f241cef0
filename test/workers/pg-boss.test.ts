// pg-boss 10 in the same PostgreSQL (schema "pgboss"), guarded: stamped jobs registered as
// operations, admission at dequeue, the barrier cancelling jobs in the queue itself, a running
// handler aborted through its token, guard-managed retries registered as operations.
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type PgBoss from "pg-boss";
import { makeWorld, type World } from "../api/fixtures";
import { prisma } from "../../lib/platform/db/prisma";
import { killRun } from "../../lib/modules/stop/kill";
import { closeControlListener } from "../../lib/modules/stop/abort/listener";
import { gateRecheck, listenFeed } from "../../lib/modules/stop/abort";
import { WorkerGuard, type GuardOutcome } from "../../lib/agent/sdk/worker";
import { createPgBoss, ensureGuardedQueue, enqueuePgBoss, guardPgBossWork } from "../../lib/agent/queues/pg-boss";
import { cancelQueueJobs } from "../../lib/modules/stop/queue-jobs";
import type { Enqueued } from "../../lib/agent/queues/enqueue";
import type { Principal } from "../../lib/platform/auth/principal";
import { waitForValue } from "../../lib/platform/wait";

const SYSTEM: Principal = { type: "system", name: "test" };
let w: World;
let boss: PgBoss;
beforeAll(async () => {
  w = await makeWorld();
  boss = createPgBoss();
  boss.on("error", (e) => console.error("[pg-boss]", e));
  await boss.start();
});
afterAll(async () => {
  await boss?.stop({ graceful: false, wait: true });
  await closeControlListener();
  await w?.close();
});

function newGuard() {
  const reader = w.client(w.a.keys.agent);
  return new WorkerGuard({
    client: w.client(w.a.keys.worker),
    feed: listenFeed({ resolveRoot: async (id) => (await reader.getRun(id)).rootRunId }),
    recheck: gateRecheck(w.a.keys.worker),
  });
}

async function authority() {
  const r = await w.client(w.a.keys.agent).createRun({ taskId: "release-payments-8bc911d" });
  return { runId: r.runId, leaseId: r.leaseId, epoch: r.epoch };
}

const op = (operationId: string) =>
  prisma().operation.findUniqueOrThrow({ where: { teamId_operationId: { teamId: w.a.teamId, operationId } } });
const jobState = async (queue: string, id: string) => (await boss.getJobById(queue, id))?.state;

const until = waitForValue;

describe("pg-boss guard", () => {
  test("every job is a registered, stamped operation naming its pg-boss job; allowed jobs run", async () => {
    const queue = `checks-${Date.now().toString(36)}`;
    await ensureGuardedQueue(boss, queue);
    const auth = await authority();
    const producer = w.client(w.a.keys.agent);
    const now = await enqueuePgBoss(boss, producer, queue, { authority: auth, tool: "db.compatibility_check", payload: { n: 1 } });
    const later = await enqueuePgBoss(boss, producer, queue, {
      authority: auth,
      tool: "db.compatibility_check",
      payload: { n: 2 },
      delayMs: 1000,
    });
    expect(await op(now.operationId)).toMatchObject({
      kind: "queued",
      state: "queued",
      providerName: `pg-boss:${queue}`,
      providerJobId: now.jobId,
      epochStamp: auth.epoch,
      leaseId: auth.leaseId,
    });
    expect(await op(later.operationId)).toMatchObject({ kind: "scheduled", state: "scheduled", providerJobId: later.jobId });
    expect((await op(later.operationId)).notBefore).not.toBeNull();
    const job = await boss.getJobById<{ quiesce: unknown }>(queue, now.jobId);
    expect(job?.data.quiesce).toMatchObject({ runId: auth.runId, leaseId: auth.leaseId, epoch: auth.epoch, operationId: now.operationId });

    const guard = newGuard();
    const seen: number[] = [];
    await guardPgBossWork<{ n: number }, string>(boss, queue, guard, async (payload) => {
      seen.push(payload.n);
      return "done";
    });
    await until(
      () => Promise.all([op(now.operationId), op(later.operationId)]),
      (ops) => ops.every((o) => o.state === "succeeded"),
    );
    expect(seen.sort()).toEqual([1, 2]);
    await until(
      () => jobState(queue, later.jobId),
      (s) => s === "completed",
    );
    await boss.offWork(queue);
  });

  test("kill with a full queue: the barrier cancels the jobs in pg-boss, and none of them starts even if the queue delivers", async () => {
    const queue = `full-${Date.now().toString(36)}`;
    await ensureGuardedQueue(boss, queue);
    const auth = await authority();
    const producer = w.client(w.a.keys.agent);
    const jobs: Enqueued[] = [];
    for (let i = 0; i < 8; i++)
      jobs.push(
        await enqueuePgBoss(boss, producer, queue, { authority: auth, tool: "ticket.update", payload: { i }, delayMs: i % 2 ? 500 : 0 }),
      );
    await killRun(SYSTEM, auth.runId, "wrong commit detected");
    // The kill committed every operation as cancelled_not_started and cancelled the jobs in pg-boss.
    for (const j of jobs) expect((await op(j.operationId)).state).toBe("cancelled_not_started");
    await until(
      () => Promise.all(jobs.map((j) => jobState(queue, j.jobId))),
      (s) => s.every((x) => x === "cancelled"),
    );

    // Second line: even if the queue hands them out again (here: resumed by hand), nothing runs.
    await boss.resume(
      queue,
      jobs.map((j) => j.jobId),
    );
    const guard = newGuard();
    let started = 0;
    const outcomes: GuardOutcome<unknown>[] = [];
    await guardPgBossWork(
      boss,
      queue,
      guard,
      async () => {
        started++;
      },
      { concurrency: 2, onOutcome: (_s, o) => outcomes.push(o as GuardOutcome<unknown>) },
    );
    await until(
      async () => outcomes.length,
      (n) => n === jobs.length,
    );
    expect(started).toBe(0);
    // Queued work is denied `killed`; a delayed job (scheduled) carries stale authority: `stale_epoch`
    // (docs/ideas.md#barriers: delayed_retry_fires_after_revocation → deny_stale_epoch).
    expect(guard.counts.snapshot()).toEqual({ discarded_killed: 4, stale_epoch: 4 });
    await until(
      () => Promise.all(jobs.map((j) => jobState(queue, j.jobId))),
      (s) => s.every((x) => x === "completed"),
    );
    await boss.offWork(queue);
  });

  test("a running handler is aborted through its token when the run is killed (pg-boss would not)", async () => {
    const queue = `long-${Date.now().toString(36)}`;
    await ensureGuardedQueue(boss, queue);
    const auth = await authority();
    const j = await enqueuePgBoss(boss, w.client(w.a.keys.agent), queue, {
      authority: auth,
      tool: "deployment.reserve_preview",
      payload: {},
    });
    const guard = newGuard();
    let outcome: GuardOutcome<unknown> | undefined;
    await guardPgBossWork(
      boss,
      queue,
      guard,
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
    await killRun(SYSTEM, auth.runId, "stop the preview");
    await until(
      async () => outcome,
      (o) => o !== undefined,
    );
    expect(outcome).toMatchObject({ status: "aborted_unknown", reason: "killed" });
    const job = await until(
      () => boss.getJobById<unknown>(queue, j.jobId),
      (x) => x?.state === "completed" || x?.state === "cancelled",
    );
    if (job?.state === "completed") expect(job.output).toMatchObject({ quiesce: "aborted_unknown", reason: "killed" });
    expect((await op(j.operationId)).state).not.toBe("cancelled_not_started");
    await boss.offWork(queue);
  });

  test("a failed handler is retried as a NEW registered operation (kind retry) that a kill cancels before it fires", async () => {
    const queue = `retry-${Date.now().toString(36)}`;
    await ensureGuardedQueue(boss, queue);
    const auth = await authority();
    const producer = w.client(w.a.keys.agent);
    const first = await enqueuePgBoss(boss, producer, queue, { authority: auth, tool: "db.compatibility_check", payload: {} });
    const guard = newGuard();
    await guardPgBossWork(
      boss,
      queue,
      guard,
      async () => {
        throw new Error("db not ready");
      },
      { retry: { limit: 3, delayMs: 60_000 }, producer },
    );
    const retryId = `${first.operationId}.r1`;
    const retry = await until(
      () => prisma().operation.findUnique({ where: { teamId_operationId: { teamId: w.a.teamId, operationId: retryId } } }),
      (o) => o !== null,
    );
    expect(retry).toMatchObject({
      kind: "retry",
      state: "scheduled",
      epochStamp: auth.epoch,
      leaseId: auth.leaseId,
      providerName: `pg-boss:${queue}`,
    });
    // The guard registers the retry operation before it sends the retry job and counts it: wait for
    // the count rather than race it.
    await until(
      async () => guard.counts.get("retry_scheduled") ?? 0,
      (n) => n >= 1,
    );
    expect(guard.counts.get("retry_scheduled")).toBe(1);
    expect((await op(first.operationId)).state).toBe("failed");
    // The retry timer is queued authority in another form (docs/ideas.md#barriers): the kill cancels it, here too.
    await killRun(SYSTEM, auth.runId, "stop retries");
    expect((await op(retryId)).state).toBe("cancelled_not_started");
    await until(
      () => jobState(queue, retry!.providerJobId!),
      (s) => s === "cancelled",
    );
    await boss.offWork(queue);
  });

  test("cancelQueueJobs reports per queue and never throws, also for a queue system that is down", async () => {
    const queue = `cancel-${Date.now().toString(36)}`;
    await ensureGuardedQueue(boss, queue);
    const auth = await authority();
    const j = await enqueuePgBoss(boss, w.client(w.a.keys.agent), queue, { authority: auth, tool: "t", payload: {}, delayMs: 60_000 });
    const report = await cancelQueueJobs(
      [
        { providerName: `pg-boss:${queue}`, providerJobId: j.jobId },
        { providerName: "bullmq:nowhere", providerJobId: "op_x" },
        { providerName: "deploy-sim", providerJobId: "preview-1" },
      ],
      { redisUrl: "redis://127.0.0.1:1" },
    );
    expect(report).toContainEqual({ providerName: `pg-boss:${queue}`, requested: 1, cancelled: 1 });
    expect(report.find((r) => r.providerName === "bullmq:nowhere")?.error).toBeTruthy();
    expect(report.some((r) => r.providerName === "deploy-sim")).toBe(false);
    expect(await jobState(queue, j.jobId)).toBe("cancelled");
  });
});
