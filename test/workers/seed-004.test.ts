// Seed 004 "What to actually check", with real processes: worker processes (tsx children running
// pg-boss + the worker guard over HTTP and server-sent events) and separate "pods" making tool calls,
// against the real API handlers and the real PostgreSQL. The operator acts from this process.
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import path from "node:path";
import type PgBoss from "pg-boss";
import { makeWorld, snapshot, type World } from "../api/fixtures";
import { prisma } from "../../lib/platform/db/prisma";
import { killRun } from "../../lib/modules/stop/kill";
import { pauseRun, resumeRun } from "../../lib/modules/runs/lifecycle";
import { closeControlListener } from "../../lib/modules/stop/abort/listener";
import { createPgBoss, ensureGuardedQueue, enqueuePgBoss } from "../../lib/agent/queues/pg-boss";
import { newId } from "../../lib/platform/ids";
import type { Enqueued } from "../../lib/agent/queues/enqueue";
import type { Principal } from "../../lib/platform/auth/principal";
import { spawnTsx, type Child } from "./support/spawn";
import { waitForValue } from "../../lib/platform/wait";

const SYSTEM: Principal = { type: "system", name: "operator-console" };
const HERE = import.meta.dirname;
let w: World;
let boss: PgBoss;
const children: Child[] = [];

beforeAll(async () => {
  w = await makeWorld();
  boss = createPgBoss({ supervise: false });
  boss.on("error", () => {});
  await boss.start(); // installs pg-boss's schema once, before any worker process starts
}, 120_000);
afterAll(async () => {
  await Promise.all(children.map((c) => c.stop("SIGKILL")));
  await boss?.stop({ graceful: false, wait: true });
  await closeControlListener();
  await w?.close();
}, 60_000);

function startWorker(id: string, queue: string, concurrency = 1): Child {
  const c = spawnTsx(path.join(HERE, "support/worker-main.ts"), {
    QUIESCE_URL: w.server.url,
    QUIESCE_API_KEY: w.a.keys.worker,
    WORKER_ID: id,
    WORKER_QUEUE: queue,
    WORKER_CONCURRENCY: String(concurrency),
  });
  children.push(c);
  return c;
}

/** A tool call from another process ("pod"), with its own operation id. */
async function callFromAnotherPod(run: { runId: string; leaseId: string; epoch: number }) {
  const c = spawnTsx(path.join(HERE, "support/gate-call.ts"), {
    QUIESCE_URL: w.server.url,
    QUIESCE_API_KEY: w.a.keys.agent,
    RUN_ID: run.runId,
    LEASE_ID: run.leaseId,
    EPOCH: String(run.epoch),
    OP_ID: newId("op"),
  });
  children.push(c);
  return c.waitFor((l) => l.event === "decision");
}

const opRow = (operationId: string) =>
  prisma().operation.findUniqueOrThrow({ where: { teamId_operationId: { teamId: w.a.teamId, operationId } } });
const decisionsOf = (operationId: string) => prisma().gateDecision.findMany({ where: { operationId }, orderBy: { at: "asc" } });
const until = <T>(f: () => Promise<T>, ok: (v: T) => boolean, timeoutMs = 60_000) => waitForValue(f, ok, timeoutMs, 100);

describe("operator-control checks (real processes)", () => {
  test("pause from another pod holds the next call; restart survival: every worker restarted, still paused; resume runs it", async () => {
    const queue = `pause-${Date.now().toString(36)}`;
    await ensureGuardedQueue(boss, queue, { redeliveryDelaySeconds: 1 });
    const run = await w.client(w.a.keys.agent).createRun({ taskId: "release-payments-8bc911d" });
    const w1 = startWorker("w1", queue);
    await w1.waitFor((l) => l.event === "ready");

    await pauseRun(SYSTEM, run.runId, "wrong commit? inspecting");
    // A tool call from a different process: held.
    expect(await callFromAnotherPod(run)).toMatchObject({ decision: "hold", reason: "paused" });
    // A queued job reaches the worker process: held at dequeue, not started.
    const job = await enqueuePgBoss(boss, w.client(w.a.keys.agent), queue, {
      authority: run,
      tool: "db.compatibility_check",
      payload: { label: "check" },
    });
    await until(
      () => decisionsOf(job.operationId),
      (d) => d.some((x) => x.decision === "hold"),
    );
    expect(w1.lines.some((l) => l.event === "started")).toBe(false);

    // Restart every worker. The pause lives in the store, not in any process.
    await w1.stop();
    expect(w1.lines.some((l) => l.event === "started")).toBe(false);
    const holdsBefore = (await decisionsOf(job.operationId)).filter((d) => d.decision === "hold").length;
    const w2 = startWorker("w2", queue);
    await w2.waitFor((l) => l.event === "ready");
    await until(
      () => decisionsOf(job.operationId),
      (d) => d.filter((x) => x.decision === "hold").length > holdsBefore,
    );
    expect((await prisma().run.findUniqueOrThrow({ where: { id: run.runId } })).lifecycle).toBe("paused");
    expect(await callFromAnotherPod(run)).toMatchObject({ decision: "hold", reason: "paused" });
    expect(w2.lines.some((l) => l.event === "started")).toBe(false);
    expect((await opRow(job.operationId)).state).toBe("queued");

    // Resume: a fresh decision, and the held job runs exactly once.
    await resumeRun(SYSTEM, run.runId, "commit verified");
    await w2.waitFor((l) => l.event === "outcome" && l.operationId === job.operationId);
    expect(w2.lines.filter((l) => l.event === "started" && l.operationId === job.operationId)).toHaveLength(1);
    expect((await opRow(job.operationId)).state).toBe("succeeded");
    expect(await callFromAnotherPod(run)).toMatchObject({ decision: "allow" });
    await w2.stop();
  }, 240_000);

  test("resume is a fresh decision against current policy: a lease that expired during the pause denies", async () => {
    const queue = `resume-${Date.now().toString(36)}`;
    await ensureGuardedQueue(boss, queue, { redeliveryDelaySeconds: 1 });
    const wk = startWorker("w3", queue);
    await wk.waitFor((l) => l.event === "ready");
    const run = await w.client(w.a.keys.agent).createRun({ taskId: "release-payments-8bc911d", leaseTtlSeconds: 12 });
    await pauseRun(SYSTEM, run.runId, "hold on");
    const job = await enqueuePgBoss(boss, w.client(w.a.keys.agent), queue, { authority: run, tool: "ticket.update", payload: {} });
    await until(
      () => decisionsOf(job.operationId),
      (d) => d.some((x) => x.decision === "hold"),
    );
    // The snapshot before the pause said "allowed"; the world changes while paused: the lease runs out.
    const lease = await prisma().lease.findUniqueOrThrow({ where: { id: run.leaseId } });
    await until(
      async () => (await prisma().$queryRawUnsafe<{ ok: boolean }[]>("SELECT now() > $1::timestamptz AS ok", lease.validUntil))[0]!.ok,
      (ok) => ok,
      30_000,
    );
    await resumeRun(SYSTEM, run.runId, "go on");
    const outcome = await wk.waitFor((l) => l.event === "outcome" && l.operationId === job.operationId);
    expect(outcome).toMatchObject({ status: "discarded", reason: "lease_expired" });
    expect(wk.lines.some((l) => l.event === "started")).toBe(false);
    expect(await callFromAnotherPod(run)).toMatchObject({ decision: "deny", reason: "lease_expired" });
    await wk.stop();
  }, 240_000);

  test("kill with a full queue and a long call in flight: the call is aborted (unknown outcome), none of the queued jobs starts", async () => {
    const queue = `kill-${Date.now().toString(36)}`;
    await ensureGuardedQueue(boss, queue, { redeliveryDelaySeconds: 1 });
    const agent = w.client(w.a.keys.agent);
    const run = await agent.createRun({ taskId: "release-payments-8bc911d" });
    const child = await agent.createRun({ taskId: "release-payments-8bc911d", parentRunId: run.runId, title: "ticket subagent" });
    const wk = startWorker("w4", queue, 1);
    await wk.waitFor((l) => l.event === "ready");
    const long = await enqueuePgBoss(boss, agent, queue, {
      authority: run,
      tool: "deployment.reserve_preview",
      payload: { long: true, label: "preview" },
    });
    await wk.waitFor((l) => l.event === "started" && l.operationId === long.operationId);
    // The queue keeps filling behind the long call (concurrency 1): the parent's and the subagent's work.
    const queued: Enqueued[] = [];
    for (let i = 0; i < 10; i++) {
      const who = i % 2 ? child : run;
      queued.push(
        await enqueuePgBoss(boss, agent, queue, {
          authority: who,
          tool: i % 2 ? "ticket.update" : "db.compatibility_check",
          payload: { label: `q${i}` },
          delayMs: i === 9 ? 500 : 0,
        }),
      );
    }
    await killRun(SYSTEM, run.runId, "wrong commit detected");

    const aborted = await wk.waitFor((l) => l.event === "outcome" && l.operationId === long.operationId);
    expect(aborted).toMatchObject({ status: "aborted_unknown", reason: "killed" });
    // "Aborted with unknown outcome", never "did not execute": the operation is not cancelled_not_started,
    // the barrier holds a settlement for it, and the worker's report is kept as evidence.
    const longOp = await opRow(long.operationId);
    expect(longOp.state).not.toBe("cancelled_not_started");
    const settlement = await prisma().settlement.findFirstOrThrow({ where: { operationId: longOp.id } });
    expect(settlement.stateAtBarrier).toBe("running");
    expect(settlement.settledState).not.toBe("cancelled_without_effect");

    for (const q of queued) expect((await opRow(q.operationId)).state).toBe("cancelled_not_started");
    // In the queue each job is either cancelled by the barrier, or — if the worker dequeued it in the
    // moment between the kill's commit and the queue cancel — acknowledged without running.
    const jobs = await until(
      () => Promise.all(queued.map((q) => boss.getJobById<unknown>(queue, q.jobId))),
      (js) => js.every((j) => j?.state === "cancelled" || j?.state === "completed"),
    );
    for (const j of jobs) if (j!.state === "completed") expect(j!.output).toMatchObject({ quiesce: "discarded" });
    // A job enqueued AFTER the kill by a producer that never heard of it is refused at registration.
    await expect(enqueuePgBoss(boss, agent, queue, { authority: run, tool: "late", payload: {} })).rejects.toMatchObject({ status: 409 });
    const startedOps = wk.lines.filter((l) => l.event === "started").map((l) => l.operationId);
    expect(startedOps).toEqual([long.operationId]);
    const stopped = await (async () => {
      await wk.stop();
      return wk.lines.find((l) => l.event === "stopped");
    })();
    expect(stopped?.counts).toMatchObject({ aborted_unknown: 1 });
  }, 240_000);

  test("an unauthorized interrupt is refused: machine keys, a viewer, and another team's operator change nothing", async () => {
    const run = await w.client(w.a.keys.agent).createRun({ taskId: "someone-elses-incident" });
    const before = await snapshot(w.a.teamId);
    await expect(w.client(w.a.keys.agent).pause(run.runId, "I am the agent")).rejects.toMatchObject({ status: 403 });
    await expect(w.client(w.a.keys.worker).kill(run.runId, "I am a worker")).rejects.toMatchObject({ status: 403 });
    await expect(w.client(w.a.keys.viewerOperator).pause(run.runId, "viewer")).rejects.toMatchObject({ status: 403 });
    // Another team's operator: not found, exactly like a run that does not exist.
    const other = await w
      .client(w.b.keys.operator)
      .pause(run.runId, "stop their incident response")
      .catch((e) => e);
    const missing = await w
      .client(w.b.keys.operator)
      .pause("run_does_not_exist", "x")
      .catch((e) => e);
    expect(other).toMatchObject({ status: 404 });
    expect(other.message).toBe(missing.message);
    await expect(w.client(w.b.keys.operator).kill(run.runId, "x")).rejects.toMatchObject({ status: 404 });
    expect(await snapshot(w.a.teamId)).toEqual(before);
    // The right operator can (so the refusals above were about permission, not a broken route).
    await expect(w.client(w.a.keys.operator).pause(run.runId, "mine to pause")).resolves.toMatchObject({ lifecycle: "paused" });
  }, 60_000);
});
