// Breaker authority (from the hardening review), over real HTTP against the real gate function:
// an operator's trip holds until an operator resets it; an automatic trip keeps its half-open probe;
// only the registering key or the lease holder moves the breaker with outcomes; every transition,
// the gate's own open → half_open included, is audited.
import { afterAll, beforeAll, expect, test } from "vitest";
import { prisma } from "../../lib/platform/db/prisma";
import { createApiKey } from "../../lib/modules/keys/api-keys";
import { verifyAuditChain } from "../../lib/modules/audit/audit";
import { BREAKER_DEFAULTS } from "../../lib/control/breaker";
import { makeWorld, type World } from "../api/fixtures";

let w: World;
let otherAgent = "";
beforeAll(async () => {
  w = await makeWorld();
  otherAgent = (await createApiKey({ type: "system", name: "test" }, { teamId: w.a.teamId, kind: "agent", name: "other agent" })).secret;
});
afterAll(async () => {
  await w?.close();
});

/** Moves the breaker's last change back past the cool-down, as if that much time had passed. */
async function coolDownPassed(runId: string) {
  await prisma().run.update({
    where: { id: runId },
    data: { breakerChangedAt: new Date(Date.now() - BREAKER_DEFAULTS.coolDownMs - 1000) },
  });
}

async function audit(runId: string) {
  return (await prisma().auditEvent.findMany({ where: { target: runId, action: { startsWith: "breaker." } }, orderBy: { id: "asc" } })).map(
    (e) => `${e.action} by ${e.actor.split(":")[0]}`,
  );
}

test("an operator's trip holds after the cool-down: no probe is admitted until an operator resets it", async () => {
  const agent = w.client(w.a.keys.agent);
  const run = await agent.createRun({ taskId: "held" });
  const ask = (op: string) => agent.gate({ runId: run.runId, leaseId: run.leaseId, epoch: run.epoch, operationId: op, tool: "deploy" });
  await w.client(w.a.keys.operator).breaker(run.runId, "trip", "incident 42");
  await coolDownPassed(run.runId);
  expect(await ask("held-1")).toMatchObject({ decision: "deny", reason: "breaker_open" });
  expect(await prisma().run.findUniqueOrThrow({ where: { id: run.runId } })).toMatchObject({ breaker: "open", breakerHeld: true });
  const view = await agent.getRun(run.runId);
  expect(view.breaker).toBe("open");
  await w.client(w.a.keys.operator).breaker(run.runId, "reset", "incident over");
  expect(await ask("held-2")).toMatchObject({ decision: "allow" });
  expect(await audit(run.runId)).toEqual(["breaker.trip by user", "breaker.reset by user"]);
});

test("an automatic trip keeps its probe; the gate's open → half_open step and the probe's result are audited", async () => {
  const agent = w.client(w.a.keys.agent);
  const run = await agent.createRun({ taskId: "auto" });
  const ask = (op: string) => agent.gate({ runId: run.runId, leaseId: run.leaseId, epoch: run.epoch, operationId: op, tool: "deploy" });
  for (let i = 0; i < BREAKER_DEFAULTS.failureThreshold; i++) {
    expect((await ask(`auto-${i}`)).decision).toBe("allow");
    await agent.complete(`auto-${i}`, { outcome: "failed" });
  }
  expect((await prisma().run.findUniqueOrThrow({ where: { id: run.runId } })).breaker).toBe("open");
  expect(await ask("auto-blocked")).toMatchObject({ decision: "deny", reason: "breaker_open" });
  await coolDownPassed(run.runId);
  expect(await ask("auto-probe")).toMatchObject({ decision: "allow" });
  // Written by the gate's own statement (it committed with the transition), and it chains.
  expect(
    await prisma().auditEvent.findFirst({
      where: { target: run.runId, action: "breaker.probe_admitted" },
      select: { actor: true, before: true, after: true },
    }),
  ).toEqual({
    actor: "system:gate",
    before: { breaker: "open" },
    after: { breaker: "half_open", failures: BREAKER_DEFAULTS.failureThreshold, probeOperationId: "auto-probe", source: "gate" },
  });
  expect(await verifyAuditChain(prisma(), w.a.teamId)).toBeNull();
  await agent.complete("auto-probe", { outcome: "succeeded" });
  expect((await prisma().run.findUniqueOrThrow({ where: { id: run.runId } })).breaker).toBe("closed");
  expect(await audit(run.runId)).toEqual([
    "breaker.tripped by system",
    "breaker.probe_admitted by system",
    "breaker.probe_succeeded by system",
  ]);
});

test("another key of the team reporting failures on operations it did not register does not move the breaker", async () => {
  const agent = w.client(w.a.keys.agent);
  const stranger = w.client(otherAgent);
  const run = await agent.createRun({ taskId: "not-yours" });
  for (let i = 0; i < BREAKER_DEFAULTS.failureThreshold + 2; i++) {
    await agent.gate({ runId: run.runId, leaseId: run.leaseId, epoch: run.epoch, operationId: `ny-${i}`, tool: "t" });
    // Same team, not the holder: the report is refused and the operation stays as it was.
    const err = await stranger.complete(`ny-${i}`, { outcome: "failed" }).catch((e) => e);
    expect(err).toMatchObject({ status: 403, code: "forbidden" });
    expect((await prisma().operation.findFirstOrThrow({ where: { operationId: `ny-${i}` } })).state).toBe("running");
  }
  const after = await prisma().run.findUniqueOrThrow({ where: { id: run.runId } });
  expect(after).toMatchObject({ breaker: "closed", breakerFailures: 0 });
  // Work registered by the worker key (not the run's holder) counts when the worker reports it.
  const worker = w.client(w.a.keys.worker);
  await worker.registerOperation({
    runId: run.runId,
    leaseId: run.leaseId,
    epoch: run.epoch,
    operationId: "ny-q",
    kind: "queued",
    tool: "t",
  });
  await worker.admit("ny-q");
  await worker.complete("ny-q", { outcome: "failed" });
  expect((await prisma().run.findUniqueOrThrow({ where: { id: run.runId } })).breakerFailures).toBe(1);
  // The lease holder (the key that registered the run) counts too, for operations another key registered.
  await worker.registerOperation({
    runId: run.runId,
    leaseId: run.leaseId,
    epoch: run.epoch,
    operationId: "ny-q2",
    kind: "queued",
    tool: "t",
  });
  await worker.admit("ny-q2");
  await agent.complete("ny-q2", { outcome: "failed" });
  expect((await prisma().run.findUniqueOrThrow({ where: { id: run.runId } })).breakerFailures).toBe(2);
});
