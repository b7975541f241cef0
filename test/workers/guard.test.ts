// The worker guard against the real API (over HTTP) and the real database: admission at dequeue,
// discards counted by reason, holds decided afresh, abort during a long call reported as unknown,
// and the approved-artifact handoff fixture of docs/ideas.md#five-questions (transport loss after the side effect).
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { createHash } from "node:crypto";
import { mkdtemp, readFile, writeFile, access } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { makeWorld, type World } from "../api/fixtures";
import { prisma } from "../../lib/platform/db/prisma";
import { killRun } from "../../lib/modules/stop/kill";
import { pauseRun, resumeRun } from "../../lib/modules/runs/lifecycle";
import { closeControlListener } from "../../lib/modules/stop/abort/listener";
import { gateRecheck, listenFeed } from "../../lib/modules/stop/abort";
import { WorkerGuard, fileJournal, type JobStamp } from "../../lib/agent/sdk/worker";
import { QuiesceClient } from "../../lib/agent/sdk/client";
import { newId } from "../../lib/platform/ids";
import type { Principal } from "../../lib/platform/auth/principal";
import { startFlakyProxy, type FlakyProxy } from "./support/flaky-proxy";
import { waitFor as pollFor } from "../../lib/platform/wait";

const SYSTEM: Principal = { type: "system", name: "test" };
let w: World;
let proxy: FlakyProxy;
beforeAll(async () => {
  w = await makeWorld();
  proxy = await startFlakyProxy(w.server.url);
});
afterAll(async () => {
  await proxy?.close();
  await closeControlListener();
  await w?.close();
});

function guardFor(client: QuiesceClient, extra: Partial<ConstructorParameters<typeof WorkerGuard>[0]> = {}) {
  const reader = w.client(w.a.keys.agent);
  return new WorkerGuard({
    client,
    feed: listenFeed({ resolveRoot: async (id) => (await reader.getRun(id)).rootRunId }),
    recheck: gateRecheck(w.a.keys.worker),
    ...extra,
  });
}

/** A run and one registered (queued) operation, as a producer would leave it in a queue. */
async function queuedJob(opts: { tool?: string; leaseTtlSeconds?: number } = {}) {
  const agent = w.client(w.a.keys.agent);
  const run = await agent.createRun({ taskId: "guard", leaseTtlSeconds: opts.leaseTtlSeconds });
  const operationId = newId("op");
  await agent.registerOperation({
    runId: run.runId,
    leaseId: run.leaseId,
    epoch: run.epoch,
    operationId,
    kind: "queued",
    tool: opts.tool ?? "db.compatibility_check",
  });
  const stamp: JobStamp = { runId: run.runId, leaseId: run.leaseId, epoch: run.epoch, operationId };
  return { run, stamp };
}

const opState = async (operationId: string) =>
  (await prisma().operation.findUniqueOrThrow({ where: { teamId_operationId: { teamId: w.a.teamId, operationId } } })).state;

describe("admission at dequeue", () => {
  test("allowed: the handler runs, its effect is reported, the operation succeeds with an effect receipt", async () => {
    const { stamp } = await queuedJob();
    const guard = guardFor(w.client(w.a.keys.worker));
    const out = await guard.run(stamp, async (ctx) => {
      expect(await opState(stamp.operationId)).toBe("running");
      await ctx.recordEffect({ providerOperationId: "check-1", detail: { compatible: true } });
      return "ok";
    });
    expect(out).toMatchObject({ status: "completed", result: "ok" });
    expect(await opState(stamp.operationId)).toBe("succeeded");
    const op = await prisma().operation.findUniqueOrThrow({
      where: { teamId_operationId: { teamId: w.a.teamId, operationId: stamp.operationId } },
      include: { effectReceipts: true },
    });
    expect(op.effectReceipts).toHaveLength(1);
    expect(op.effectReceipts[0]).toMatchObject({ providerOperationId: "check-1", source: "executor" });
  });

  test("killed before dequeue: acknowledged without running, counted discarded_killed", async () => {
    const { run, stamp } = await queuedJob();
    await killRun(SYSTEM, run.runId, "wrong commit");
    const guard = guardFor(w.client(w.a.keys.worker));
    let ran = false;
    const out = await guard.run(stamp, async () => {
      ran = true;
    });
    expect(ran).toBe(false);
    expect(out).toMatchObject({ status: "discarded", reason: "killed", counter: "discarded_killed" });
    expect(guard.counts.get("discarded_killed")).toBe(1);
    expect(await opState(stamp.operationId)).toBe("cancelled_not_started");
  });

  test("an epoch newer than the job's stamp: discarded and counted stale_epoch", async () => {
    const { run, stamp } = await queuedJob();
    // The revocation epoch moved on after the job was stamped (docs/ideas.md#barriers: epoch 17 is stale once 18 exists).
    await prisma().run.update({ where: { id: run.runId }, data: { epoch: { increment: 1 } } });
    const guard = guardFor(w.client(w.a.keys.worker));
    let ran = false;
    const out = await guard.run(stamp, async () => {
      ran = true;
    });
    expect(ran).toBe(false);
    expect(out).toMatchObject({ status: "discarded", reason: "stale_epoch", counter: "stale_epoch" });
    expect(guard.counts.snapshot()).toEqual({ stale_epoch: 1 });
  });

  test("a job for an operation the control plane never registered has no authority", async () => {
    const { stamp } = await queuedJob();
    const guard = guardFor(w.client(w.a.keys.worker));
    let ran = false;
    const out = await guard.run({ ...stamp, operationId: newId("op") }, async () => {
      ran = true;
    });
    expect(ran).toBe(false);
    expect(out).toMatchObject({ status: "discarded", counter: "discarded_missing_state" });
  });

  test("paused: the job is held (not run) until resume, then decided afresh and run", async () => {
    const { run, stamp } = await queuedJob();
    await pauseRun(SYSTEM, run.runId, "inspect");
    const guard = guardFor(w.client(w.a.keys.worker));
    let ran = false;
    const pending = guard.run(stamp, async () => {
      ran = true;
      return "after resume";
    });
    // The hold is recorded by the gate as a decision; wait for it, then prove nothing ran.
    await waitFor(async () => (await prisma().gateDecision.count({ where: { operationId: stamp.operationId, decision: "hold" } })) > 0);
    expect(ran).toBe(false);
    expect(await opState(stamp.operationId)).toBe("queued");
    await resumeRun(SYSTEM, run.runId, "fine");
    expect(await pending).toMatchObject({ status: "completed", result: "after resume" });
    expect(ran).toBe(true);
    expect(guard.counts.get("held")).toBe(1);
  });
});

describe("abort during a long call", () => {
  test("kill while the handler runs: its signal aborts, the outcome is aborted_unknown, never 'did not execute'", async () => {
    const { run, stamp } = await queuedJob({ tool: "deployment.reserve_preview" });
    const guard = guardFor(w.client(w.a.keys.worker));
    let started!: () => void;
    const isRunning = new Promise<void>((r) => {
      started = r;
    });
    const pending = guard.run(
      stamp,
      (ctx) =>
        new Promise((_, reject) => {
          started();
          ctx.signal.addEventListener("abort", () => reject(ctx.signal.reason), { once: true });
        }),
    );
    await isRunning;
    await killRun(SYSTEM, run.runId, "operator pressed stop");
    const out = await pending;
    expect(out).toMatchObject({ status: "aborted_unknown", reason: "killed" });
    expect(guard.counts.get("aborted_unknown")).toBe(1);
    const state = await opState(stamp.operationId);
    expect(["running", "aborted_unknown"]).toContain(state);
    expect(state).not.toBe("cancelled_not_started");
    const settlement = await prisma().settlement.findFirst({ where: { operation: { operationId: stamp.operationId } } });
    expect(settlement?.stateAtBarrier).toBe("running");
    expect(settlement?.settledState ?? "unknown").not.toBe("cancelled_without_effect");
  });
});

describe("approved-artifact handoff (docs/ideas.md#five-questions): transport loss after the side effect", () => {
  async function handoff(loss: "before_server" | "after_server") {
    const dir = await mkdtemp(path.join(tmpdir(), "quiesce-handoff-"));
    const journal = fileJournal(path.join(dir, "receipts"));
    const { stamp } = await queuedJob({ tool: "artifact.handoff" });
    const artifact = path.join(dir, "approved-artifact.txt");
    let writes = 0;
    const handler = async (ctx: { recordEffect: (e: { providerOperationId: string; detail?: unknown }) => Promise<void> }) => {
      writes++;
      const body = `approved build for ${stamp.operationId}\n`;
      await writeFile(artifact, body, { flag: "a" });
      await ctx.recordEffect({
        providerOperationId: `file:${artifact}`,
        detail: { sha256: createHash("sha256").update(body).digest("hex") },
      });
      return "handed off";
    };
    const flaky = new QuiesceClient({ url: proxy.url, apiKey: w.a.keys.worker, timeoutMs: 10_000 });
    proxy.loseNext((m, p) => m === "POST" && p.endsWith(`/operations/${stamp.operationId}/complete`), loss);
    const first = await guardFor(flaky, { journal }).run(stamp, handler);
    return { dir, journal, stamp, artifact, handler, first, writes: () => writes };
  }

  test("lost before the server saw it: uncertain, then the retry reconciles from the executor receipt (already applied)", async () => {
    const h = await handoff("before_server");
    expect(h.first).toMatchObject({ status: "uncertain", cause: "transport_lost" });
    const entry = await h.journal.get(h.stamp.operationId);
    expect(entry).toMatchObject({
      state: "uncertain",
      uncertain: { cause: "transport_lost" },
      effect: { providerOperationId: `file:${h.artifact}` },
    });
    expect(await opState(h.stamp.operationId)).toBe("running");

    // The queue redelivers the same operationId to a worker with a healthy connection.
    const retry = await guardFor(w.client(w.a.keys.worker), { journal: h.journal }).run(h.stamp, h.handler);
    expect(retry).toMatchObject({ status: "already_applied", reconciled: true });
    expect(h.writes()).toBe(1);
    expect((await readFile(h.artifact, "utf8")).split("\n").filter(Boolean)).toHaveLength(1);
    const op = await prisma().operation.findUniqueOrThrow({
      where: { teamId_operationId: { teamId: w.a.teamId, operationId: h.stamp.operationId } },
      include: { effectReceipts: true },
    });
    expect(op.state).toBe("succeeded");
    expect(op.effectReceipts).toHaveLength(1);
    expect(op.effectReceipts[0]!.detail).toMatchObject({ sha256: expect.any(String) });
    expect(op.outcomeDetail).toMatchObject({ reconciledFrom: "executor_receipt", uncertainSince: expect.any(String) });

    // Any later delivery is answered from the record: already applied, with the effect receipt.
    const again = await guardFor(w.client(w.a.keys.worker), { journal: h.journal }).run(h.stamp, h.handler);
    expect(again).toMatchObject({ status: "already_applied", reconciled: false, operation: { state: "succeeded" } });
    expect(h.writes()).toBe(1);
  });

  test("lost after the server recorded it: the retry resolves as already applied without running", async () => {
    const h = await handoff("after_server");
    expect(h.first).toMatchObject({ status: "uncertain", cause: "transport_lost" });
    expect(await opState(h.stamp.operationId)).toBe("succeeded");
    const retry = await guardFor(w.client(w.a.keys.worker), { journal: h.journal }).run(h.stamp, h.handler);
    expect(retry).toMatchObject({ status: "already_applied", reconciled: false, operation: { state: "succeeded" } });
    expect(h.writes()).toBe(1);
    await expect(access(h.artifact)).resolves.toBeUndefined();
  });
});

const waitFor = (cond: () => Promise<boolean>, timeoutMs = 20_000) => pollFor("condition", cond, timeoutMs, 25);
