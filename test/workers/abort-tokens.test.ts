// Abort tokens against the real database and the real route handlers over HTTP: a kill committed by
// another connection aborts every running operation of the tree (in-process LISTEN and remote SSE);
// a pause does not (it holds the NEXT call) unless abortOnPause; a lost LISTEN connection resyncs.
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { makeWorld, type World } from "../api/fixtures";
import { killRun } from "../../lib/modules/stop/kill";
import { pauseRun, resumeRun } from "../../lib/modules/runs/lifecycle";
import { AbortTokens, type AbortToken } from "../../lib/agent/abort";
import { gateRecheck, listenFeed } from "../../lib/modules/stop/abort";
import { ControlListener } from "../../lib/modules/stop/abort/listener";
import { sseFeed } from "../../lib/agent/sdk/worker/sse-feed";
import { pool } from "../../lib/platform/db/pool";
import type { Principal } from "../../lib/platform/auth/principal";
import { newId } from "../../lib/platform/ids";
import { QuiesceClient } from "../../lib/agent/sdk/client";

const SYSTEM: Principal = { type: "system", name: "test" };
let w: World;
let listener: ControlListener;

beforeAll(async () => {
  w = await makeWorld();
  listener = new ControlListener({ idleCloseMs: 60_000 });
});
afterAll(async () => {
  await listener?.close();
  await w?.close();
});

/** A root run with a child, and `n` operations allowed by the gate (so they are running). */
async function runningTree(n: number) {
  const agent = w.client(w.a.keys.agent);
  const root = await agent.createRun({ taskId: "abort-tokens" });
  const child = await agent.createRun({ taskId: "abort-tokens", parentRunId: root.runId });
  const ops: { runId: string; leaseId: string; epoch: number; operationId: string }[] = [];
  for (let i = 0; i < n; i++) {
    const r = i % 2 === 0 ? root : child;
    const operationId = newId("op");
    const d = await agent.gate({ runId: r.runId, leaseId: r.leaseId, epoch: r.epoch, operationId, tool: "long.call" });
    expect(d.decision).toBe("allow");
    ops.push({ runId: r.runId, leaseId: r.leaseId, epoch: r.epoch, operationId });
  }
  return { root, child, ops };
}

function inProcessTokens(abortOnPause = false) {
  const agent = w.client(w.a.keys.agent);
  return new AbortTokens({
    feed: listenFeed({ resolveRoot: async (runId) => (await agent.getRun(runId)).rootRunId, listener }),
    recheck: gateRecheck(w.a.keys.worker),
    abortOnPause,
  });
}

function aborted(t: AbortToken): Promise<string> {
  return new Promise((resolve) => {
    if (t.signal.aborted) return resolve(t.abortReason()!.reason);
    t.signal.addEventListener("abort", () => resolve(t.abortReason()!.reason), { once: true });
  });
}

describe("in-process abort tokens (LISTEN quiesce_control)", () => {
  test("a kill committed elsewhere aborts every running operation of the tree, with its reason", async () => {
    const { root, ops } = await runningTree(6);
    const tokens = inProcessTokens();
    const opened = await Promise.all(ops.map((o) => tokens.open(o)));
    expect(opened.every((t) => !t.signal.aborted)).toBe(true);
    await killRun(SYSTEM, root.runId, "wrong commit");
    const reasons = await Promise.all(opened.map(aborted));
    // The root's operations see `killed`; the child's see the revoked lineage.
    expect(new Set(reasons).size).toBeGreaterThan(0);
    for (const r of reasons) expect(["killed", "parent_revoked", "lease_revoked"]).toContain(r);
    opened.forEach((t) => t.close());
    expect(tokens.size).toBe(0);
  });

  test("pause does not abort a running operation (it holds the NEXT call); resume leaves it running", async () => {
    const { root, ops } = await runningTree(2);
    const tokens = inProcessTokens(false);
    const [t1, t2] = await Promise.all(ops.map((o) => tokens.open(o)));
    // Open a probe token in a second registry with abortOnPause: its abort proves the pause event
    // was delivered and re-checked, so the assertion on t1/t2 below is not a race.
    const probeTokens = inProcessTokens(true);
    const probe = await probeTokens.open(ops[0]!);
    await pauseRun(SYSTEM, root.runId, "inspect");
    expect(await aborted(probe)).toBe("paused");
    // The non-probe registry got the same notification; give its re-check the same chance to finish.
    await t1!.check();
    expect(t1!.signal.aborted).toBe(false);
    expect(t2!.signal.aborted).toBe(false);
    await resumeRun(SYSTEM, root.runId, "fine");
    await t1!.check();
    expect(t1!.signal.aborted).toBe(false);
    [t1, t2, probe].forEach((t) => t!.close());
  });

  test("the listener reconnects after its connection is killed and makes every subscriber re-check", async () => {
    const { root, ops } = await runningTree(1);
    const tokens = inProcessTokens();
    const t = await tokens.open(ops[0]!);
    const resynced = new Promise<void>((resolve) => {
      void listener.subscribe(root.runId, (e) => {
        if (e.kind === "resync") resolve();
      });
    });
    await pool().query(
      "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'quiesce-control-listener' AND datname = current_database()",
    );
    await resynced;
    // Live again: a kill after the reconnect still reaches the token.
    await killRun(SYSTEM, root.runId, "after reconnect");
    expect(await aborted(t)).toBe("killed");
    t.close();
  });
});

describe("what else aborts, and what does not", () => {
  test("an operation's own expiry re-checks it at that moment (a timer, not polling); its neighbours keep running", async () => {
    const agent = w.client(w.a.keys.agent);
    const run = await agent.createRun({ taskId: "expiry" });
    const short = newId("op");
    const long = newId("op");
    const expiresAt = new Date(Date.now() + 1500).toISOString();
    await agent.registerOperation({
      runId: run.runId,
      leaseId: run.leaseId,
      epoch: run.epoch,
      operationId: short,
      kind: "queued",
      tool: "t",
      expiresAt,
    });
    await agent.registerOperation({
      runId: run.runId,
      leaseId: run.leaseId,
      epoch: run.epoch,
      operationId: long,
      kind: "queued",
      tool: "t",
    });
    const worker = w.client(w.a.keys.worker);
    // The worker is not the run's holder: it presents the lease the job carried.
    expect((await worker.admit(short, { leaseId: run.leaseId })).decision).toBe("allow");
    expect((await worker.admit(long, { leaseId: run.leaseId })).decision).toBe("allow");
    const tokens = inProcessTokens();
    const a = await tokens.open({ runId: run.runId, leaseId: run.leaseId, epoch: run.epoch, operationId: short, expiresAt });
    const b = await tokens.open({ runId: run.runId, leaseId: run.leaseId, epoch: run.epoch, operationId: long });
    expect(await aborted(a)).toBe("operation_expired");
    await b.check();
    expect(b.signal.aborted).toBe(false);
    a.close();
    b.close();
  });

  test("a wake-up that cannot be verified (control plane unreachable) aborts: fail closed", async () => {
    const { root, ops } = await runningTree(1);
    const agent = w.client(w.a.keys.agent);
    const dead = new QuiesceClient({ url: "http://127.0.0.1:9", apiKey: w.a.keys.worker, timeoutMs: 500 });
    const tokens = new AbortTokens({
      feed: listenFeed({ resolveRoot: async (runId) => (await agent.getRun(runId)).rootRunId, listener }),
      recheck: async (op, target) => {
        const r = await dead.heartbeat(op, { leaseId: target.leaseId });
        return { continue: r.continue, reason: r.reason };
      },
      unreachableAttempts: 2,
    });
    const t = await tokens.open(ops[0]!);
    await pauseRun(SYSTEM, root.runId, "any change wakes the token");
    expect(await aborted(t)).toBe("control_unreachable");
    t.close();
  });
});

describe("remote abort tokens (server-sent events + HTTP heartbeat)", () => {
  test("a kill reaches a remote worker's token through GET /runs/{id}/events", async () => {
    const { root, ops } = await runningTree(4);
    const worker = w.client(w.a.keys.worker);
    const tokens = new AbortTokens({
      feed: sseFeed(worker),
      recheck: async (op, target) => {
        const r = await worker.heartbeat(op, { leaseId: target.leaseId });
        return { continue: r.continue, reason: r.reason };
      },
    });
    const opened = await Promise.all(ops.map((o) => tokens.open(o)));
    await w.client(w.a.keys.operator).kill(root.runId, "operator pressed stop");
    const reasons = await Promise.all(opened.map(aborted));
    for (const r of reasons) expect(["killed", "parent_revoked", "lease_revoked"]).toContain(r);
    opened.forEach((t) => t.close());
  });
});

describe("a kill notification naming the run is authority enough (a kill is terminal)", () => {
  test("kill aborts at once with `killed`, no re-check asked (LISTEN and SSE); other wake-ups and unnamed runs are re-checked", async () => {
    const { root, child, ops } = await runningTree(4);
    const agent = w.client(w.a.keys.agent);
    const worker = w.client(w.a.keys.worker);
    const asked: string[] = [];
    const recheck = (via: string) => async (op: string, target: { leaseId: string }) => {
      asked.push(`${via}:${op}`);
      // The worker is not the run's holder: it presents the lease its job carried.
      const r = await worker.heartbeat(op, { leaseId: target.leaseId });
      return { continue: r.continue, reason: r.reason };
    };
    const local = new AbortTokens({
      feed: listenFeed({ resolveRoot: async (runId) => (await agent.getRun(runId)).rootRunId, listener }),
      recheck: recheck("listen"),
    });
    const remote = new AbortTokens({ feed: sseFeed(worker), recheck: recheck("sse") });
    const tokens = [...(await Promise.all(ops.map((o) => local.open(o)))), ...(await Promise.all(ops.map((o) => remote.open(o))))];

    // A pause is only a wake-up: re-checked (one heartbeat per run and feed), nothing aborted.
    await pauseRun(SYSTEM, root.runId, "look first");
    await waitUntil(() => asked.length >= 4);
    expect(tokens.every((t) => !t.signal.aborted)).toBe(true);
    await resumeRun(SYSTEM, root.runId, "fine");
    await waitUntil(() => asked.length >= 8);

    // Killing the child names the child (and its subtree) only: its tokens abort without a re-check;
    // the root's tokens are woken (same tree), re-checked, and keep running.
    asked.length = 0;
    await killRun(SYSTEM, child.runId, "the child misbehaves");
    const childTokens = tokens.filter((t, i) => ops[i % ops.length]!.runId === child.runId);
    const rootTokens = tokens.filter((t, i) => ops[i % ops.length]!.runId === root.runId);
    expect(await Promise.all(childTokens.map(aborted))).toEqual(childTokens.map(() => "killed"));
    await waitUntil(() => asked.length >= 2);
    expect(asked.every((a) => rootTokens.some((t) => a.endsWith(`:${t.operationId}`)))).toBe(true);
    expect(rootTokens.every((t) => !t.signal.aborted)).toBe(true);
    tokens.forEach((t) => t.close());
  });
});

async function waitUntil(ok: () => boolean, timeoutMs = 15_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!ok()) {
    if (Date.now() > until) throw new Error("condition not reached in time");
    await new Promise((r) => setTimeout(r, 25));
  }
}
