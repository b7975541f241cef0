// The kill in two transactions (lib/modules/stop/kill.ts, docs/barrier-and-receipts.md#kill-the-barrier-transaction):
// dispatch stops when the FIRST commits (every gate, admit and heartbeat under the subtree denies), and
// queued work is marked cancelled_not_started by the second. A process that dies between the two loses
// nothing: queued work still cannot start, a repeated kill or the barrier engine finishes the second
// step, exactly once, and the engine never settles a barrier before it is done. Real PostgreSQL, the
// real gate function, the real engine loop; the concurrent finishers really race.
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { prisma } from "../../lib/platform/db/prisma";
import { cancelQueuedWork, killRun } from "../../lib/modules/stop/kill";
import { createApiKey } from "../../lib/modules/keys/api-keys";
import { hashKeySecret } from "../../lib/platform/auth/api-key";
import { admitCheck, gateCheck } from "../../lib/modules/gate/statement";
import { runBarrierWorker } from "../../lib/modules/stop/engine/worker";
import { addOp, makeTeam, makeTree, waitFor, type TeamFixture } from "./fixtures";
import { closePool } from "../../lib/platform/db/pool";

const SYSTEM = { type: "system", name: "test" } as const;
let team: TeamFixture;
beforeAll(async () => {
  team = await makeTeam();
});
afterAll(async () => {
  await prisma().$disconnect();
  await closePool();
});

/** killRun stopped right after its first commit, as if its process died there. */
async function killFirstStepOnly(runId: string): Promise<string> {
  let barrierId = "";
  await expect(
    killRun(team.users.operator.principal, runId, "crash between the steps", null, {
      onDispatchStopped: (id) => {
        barrierId = id;
        throw new Error("process died after the dispatch stop");
      },
    }),
  ).rejects.toThrow("process died");
  expect(barrierId).toMatch(/^stop_/);
  return barrierId;
}

describe("kill in two steps", () => {
  test("after the first commit alone: queued work cannot start, nothing is counted yet, and a repeated kill finishes the second step", async () => {
    const { root, children } = await makeTree(team.teamId, 1);
    const child = children[0]!;
    const worker = await createApiKey(SYSTEM, { teamId: team.teamId, kind: "worker", name: "w" });
    const keyHash = hashKeySecret(worker.secret);
    const q1 = await addOp(team.teamId, root, { state: "queued" });
    const q2 = await addOp(team.teamId, child, { state: "queued" });
    const q3 = await addOp(team.teamId, child, { state: "queued" });
    const retry = await addOp(team.teamId, child, { state: "scheduled", kind: "retry" });

    const barrierId = await killFirstStepOnly(root.runId);
    const b0 = await prisma().barrier.findUniqueOrThrow({ where: { id: barrierId } });
    expect(b0).toMatchObject({ phase: "revoking", runsKilled: 2, leasesRevoked: 2, queuedCancelled: 0, queuedCancelledAt: null });
    expect(b0.dispatchStoppedAt).not.toBeNull();
    expect((await prisma().operation.findUniqueOrThrow({ where: { id: q1.rowId } })).state).toBe("queued");

    // Dispatch is stopped although the rows still say queued: a dequeue is denied (and recorded as such),
    // a new call too.
    expect(await admitCheck({ keyHash, operationId: q1.operationId, leaseId: root.leaseId })).toMatchObject({
      decision: "deny",
      reason: "killed",
    });
    expect(await admitCheck({ keyHash, operationId: q2.operationId, leaseId: root.leaseId })).toMatchObject({
      decision: "deny",
      reason: "parent_revoked",
    });
    expect(
      await gateCheck({ keyHash, runId: child.runId, leaseId: child.leaseId, epoch: 1, operationId: "after-first-step", tool: "x" }),
    ).toMatchObject({ decision: "deny", reason: "parent_revoked" });
    expect(await prisma().operation.findUniqueOrThrow({ where: { id: q1.rowId } })).toMatchObject({
      state: "denied",
      stateReason: "killed",
    });

    // Killing again returns the same barrier, once the second step is done.
    expect(await killRun(team.users.operator.principal, child.runId, "again")).toEqual({ barrierId, created: false });
    const b1 = await prisma().barrier.findUniqueOrThrow({ where: { id: barrierId } });
    expect(b1).toMatchObject({ queuedCancelled: 1, retriesCancelled: 1, scheduledCancelled: 0 });
    expect(b1.queuedCancelledAt).not.toBeNull();
    const ops = new Map((await prisma().operation.findMany({ where: { runId: { in: [root.runId, child.runId] } } })).map((o) => [o.id, o]));
    expect(ops.get(q2.rowId)).toMatchObject({ state: "denied", stateReason: "parent_revoked" });
    expect(ops.get(q3.rowId)).toMatchObject({ state: "cancelled_not_started", stateReason: "parent_revoked" });
    expect(ops.get(retry.rowId)).toMatchObject({ state: "cancelled_not_started", stateReason: "stale_epoch" });
    // Done once: a further run changes nothing.
    expect(await cancelQueuedWork(SYSTEM, [barrierId])).toBe(0);
    expect(await prisma().barrier.findUniqueOrThrow({ where: { id: barrierId } })).toMatchObject({
      queuedCancelled: 1,
      retriesCancelled: 1,
    });
    // Only system principals run the engine's step.
    await expect(cancelQueuedWork(team.users.admin.principal, [barrierId])).rejects.toMatchObject({ code: "forbidden" });
  });

  test("finishers racing the dequeues: every queued operation ends cancelled or denied (never running), counted once", async () => {
    const { root, children } = await makeTree(team.teamId, 2);
    const worker = await createApiKey(SYSTEM, { teamId: team.teamId, kind: "worker", name: "w2" });
    const keyHash = hashKeySecret(worker.secret);
    const queued = [];
    for (let i = 0; i < 60; i++) queued.push(await addOp(team.teamId, [root, ...children][i % 3]!, { state: "queued" }));
    const barrierId = await killFirstStepOnly(root.runId);

    const results = await Promise.all([
      killRun(team.users.operator.principal, root.runId, "again").then(() => -1),
      cancelQueuedWork(SYSTEM, [barrierId]),
      cancelQueuedWork(SYSTEM, [barrierId]),
      ...queued.map((q) =>
        admitCheck({ keyHash, operationId: q.operationId, leaseId: root.leaseId }).then((r) => (r.ok && r.decision === "deny" ? -2 : -3)),
      ),
    ]);
    expect(results.filter((x) => x === -3)).toEqual([]); // every dequeue was denied
    const ops = await prisma().operation.findMany({ where: { id: { in: queued.map((q) => q.rowId) } } });
    const cancelled = ops.filter((o) => o.state === "cancelled_not_started").length;
    const denied = ops.filter((o) => o.state === "denied").length;
    expect(cancelled + denied).toBe(queued.length);
    const b = await prisma().barrier.findUniqueOrThrow({ where: { id: barrierId } });
    expect(b.queuedCancelled).toBe(cancelled);
    // At most one of the two engine calls did the work (the kill may have); none double-counted.
    const byEngine = results.slice(1, 3) as number[];
    expect(byEngine.filter((n) => n > 0).length).toBeLessThanOrEqual(1);
    expect(byEngine.reduce((a, n) => a + n, 0)).toBeLessThanOrEqual(cancelled);
  });

  test("the barrier engine finishes a half-done kill before it settles anything", async () => {
    const { root, children } = await makeTree(team.teamId, 1);
    const q = await addOp(team.teamId, children[0]!, { state: "queued" });
    const barrierId = await killFirstStepOnly(root.runId);
    // Without the second step the engine may not move the barrier on.
    expect(await prisma().barrier.findUniqueOrThrow({ where: { id: barrierId } })).toMatchObject({
      phase: "revoking",
      queuedCancelledAt: null,
    });

    const ac = new AbortController();
    const engine = runBarrierWorker({
      teamId: team.teamId,
      signal: ac.signal,
      pollMs: 200,
      claimMs: 3000,
      localSettleMs: 200,
      listen: true,
    });
    try {
      await waitFor(
        "the engine moved the barrier past revoking",
        async () => (await prisma().barrier.findUniqueOrThrow({ where: { id: barrierId } })).phase !== "revoking",
        30_000,
        100,
      );
    } finally {
      ac.abort();
      await engine;
    }
    const b = await prisma().barrier.findUniqueOrThrow({ where: { id: barrierId } });
    expect(b.queuedCancelled).toBe(1);
    expect(b.queuedCancelledAt).not.toBeNull();
    expect(b.queuedCancelledAt!.getTime()).toBeGreaterThanOrEqual(b.dispatchStoppedAt!.getTime());
    expect(await prisma().operation.findUniqueOrThrow({ where: { id: q.rowId } })).toMatchObject({
      state: "cancelled_not_started",
      stateReason: "parent_revoked",
    });
  });
});
