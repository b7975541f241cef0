// the barrier article's (docs/ideas.md#barriers) eval `cancellation_worker_crashes_mid_barrier →
// resume_from_durable_barrier`, with real
// processes: engine A is SIGKILLed while a slow provider holds its cancel request; two fresh engines
// then race to finish the barrier from its durable rows. Exactly one receipt may result.
import { afterAll, beforeAll, expect, test } from "vitest";
import { prisma } from "../../lib/platform/db/prisma";
import { closePool } from "../../lib/platform/db/pool";
import { killRun } from "../../lib/modules/stop/kill";
import { SimProviderClient } from "../../lib/modules/stop/providers/sim-client";
import {
  addOp,
  makeProvider,
  makeTeam,
  makeTree,
  receiptsOf,
  startSimProcess,
  startWorkerProcess,
  waitFor,
  type Proc,
  type TeamFixture,
} from "./fixtures";

const PORT = 4712;
let team: TeamFixture;
let sim: Proc & { url: string };
const procs: Proc[] = [];

beforeAll(async () => {
  team = await makeTeam();
  sim = await startSimProcess(PORT);
  await makeProvider(team.teamId, { name: "deploy-sim", url: sim.url, quietPeriodSeconds: 0, settleDeadlineMs: 30_000, timeoutMs: 20_000 });
}, 120_000);

afterAll(async () => {
  await Promise.all(procs.map((p) => p.stop("SIGKILL")));
  await sim?.stop();
  await prisma().$disconnect();
  await closePool();
});

test("an engine killed with SIGKILL mid-barrier is finished by another; exactly one receipt", async () => {
  const simc = new SimProviderClient(sim.url);
  const { root } = await makeTree(team.teamId, 1);
  const fast = await simc.createJob({ mode: "cancel_cleanly" });
  const slow = await simc.createJob({ mode: "slow", delayMs: 60_000 });
  await addOp(team.teamId, root, { state: "running", providerName: "deploy-sim", providerJobId: fast.jobId, operationId: "fast-op" });
  const slowOp = await addOp(team.teamId, root, {
    state: "running",
    providerName: "deploy-sim",
    providerJobId: slow.jobId,
    operationId: "slow-op",
  });
  const env = { QUIESCE_BARRIER_CLAIM_MS: "2000" };

  const a = startWorkerProcess(team.teamId, env, "engine-A");
  procs.push(a);
  const { barrierId } = await killRun(team.users.operator.principal, root.runId, "crash drill");
  // Mid-way: one settlement done, the other's cancel request sent and unanswered.
  await waitFor(
    "engine A mid-barrier",
    async () => {
      if (a.child.exitCode !== null) throw new Error(`engine A exited: ${a.output()}`);
      const ss = await prisma().settlement.findMany({ where: { barrierId }, include: { operation: true } });
      const f = ss.find((s) => s.operation.operationId === "fast-op");
      const s = ss.find((s) => s.operation.operationId === "slow-op");
      return (
        f?.settledState === "cancelled_without_effect" &&
        s?.cancelRequestedAt &&
        s.providerResponse === null &&
        (await simc.getJob(slow.jobId)).cancelRequests === 1
      );
    },
    90_000,
    100,
  );
  const claimedByA = await prisma().barrier.findUniqueOrThrow({ where: { id: barrierId } });
  expect(claimedByA).toMatchObject({ phase: "settling", claimedBy: "engine-A" });
  await a.stop("SIGKILL");
  expect(a.child.signalCode).toBe("SIGKILL");

  // The provider answers promptly from now on; the slow request A sent dies with A's connection.
  await simc.setMode(slow.jobId, "cancel_cleanly");
  const b1 = startWorkerProcess(team.teamId, env, "engine-B1");
  const b2 = startWorkerProcess(team.teamId, env, "engine-B2");
  procs.push(b1, b2);
  const receipt = await waitFor(
    "the receipt",
    async () => {
      for (const p of [b1, b2]) if (p.child.exitCode !== null) throw new Error(`engine exited: ${p.output()}`);
      const b = await prisma().barrier.findUniqueOrThrow({ where: { id: barrierId } });
      return b.phase === "complete" ? b : null;
    },
    120_000,
    200,
  );
  // Let both engines run a little longer: neither may issue a second receipt.
  await waitFor(
    "both engines idle",
    async () => {
      const b = await prisma().barrier.findUniqueOrThrow({ where: { id: barrierId } });
      return b.claimedBy === null && /receipt v1/.test(b1.output() + b2.output());
    },
    30_000,
    200,
  );
  await Promise.all([b1.stop(), b2.stop()]);

  const rs = await receiptsOf(barrierId);
  expect(rs).toHaveLength(1);
  expect(rs[0]!.decision).toBe("stopped_and_quiet");
  expect(receipt.decision).toBe("stopped_and_quiet");
  const slowSettlement = await prisma().settlement.findFirstOrThrow({ where: { barrierId, operationId: slowOp.rowId } });
  expect(slowSettlement.settledState).toBe("cancelled_without_effect");
  // A new engine re-sent the cancel (idempotent); the settled one was not redone.
  expect((await simc.getJob(slow.jobId)).cancelRequests).toBeGreaterThanOrEqual(2);
  expect((await simc.getJob(fast.jobId)).cancelRequests).toBe(1);
  // The original cancel time survives the crash: the deadline is counted from A's request.
  expect(slowSettlement.cancelRequestedAt!.getTime()).toBeLessThan(claimedByA.claimExpiresAt!.getTime());
  expect(b1.output() + b2.output()).toMatch(/claimed .*settling/);
}, 240_000);
