// Lease renewal against the real gate function: an active run keeps its authority past its TTL, an idle
// one is abandoned, the team's maximum lifetime bounds renewal, neither a hold (pause) nor a kill renews,
// and a child's calls keep its ancestors' leases alive.
import { afterAll, beforeAll, expect, test } from "vitest";
import { setTimeout as sleep } from "node:timers/promises";
import { prisma } from "../../lib/platform/db/prisma";
import { newId } from "../../lib/platform/ids";
import fc from "fast-check";
import { gateCheck } from "../../lib/modules/gate/statement";
import { renewChain, type RenewableLease } from "../../lib/control/lease";
import { makeWorld, type World } from "../api/fixtures";
import { makeChain, makeKey, makeTeam } from "../support/fixtures";

let w: World;
beforeAll(async () => {
  w = await makeWorld();
});
afterAll(async () => {
  await w?.close();
});

const leaseOf = (id: string) => prisma().lease.findUniqueOrThrow({ where: { id } });

test("a run that keeps calling outlives its TTL; one that stops calling is abandoned (lease_expired)", async () => {
  const agent = w.client(w.a.keys.agent);
  const r = await agent.createRun({ taskId: "renew", leaseTtlSeconds: 2 });
  const first = await leaseOf(r.leaseId);
  expect(first.ttlSeconds).toBe(2);
  expect(first.maxValidUntil!.getTime() - first.createdAt.getTime()).toBe(7 * 24 * 3600 * 1000);
  const started = Date.now();
  // Call every 400 ms for 3.5 s: more than one TTL, always renewed.
  while (Date.now() - started < 3500) {
    const t0 = Date.now();
    const ans = await agent.gate({ runId: r.runId, leaseId: r.leaseId, epoch: r.epoch, operationId: newId("op"), tool: "Read" });
    expect(ans.decision, ans.reason).toBe("allow");
    const l = await leaseOf(r.leaseId);
    // After an allowed call the lease reaches at least half a window past the call.
    expect(l.validUntil.getTime()).toBeGreaterThanOrEqual(t0 + 1000 - 50);
    await sleep(400);
  }
  expect((await leaseOf(r.leaseId)).validUntil.getTime()).toBeGreaterThan(first.validUntil.getTime());
  // Silence for longer than a TTL: abandoned, for good.
  await sleep(2300);
  const late = await agent.gate({ runId: r.runId, leaseId: r.leaseId, epoch: r.epoch, operationId: newId("op"), tool: "Read" });
  expect(late).toMatchObject({ decision: "deny", reason: "lease_expired" });
  const after = await leaseOf(r.leaseId);
  expect(after.validUntil.getTime()).toBeLessThan(Date.now());
});

test("renewal stops at the team's maximum lifetime", async () => {
  await prisma().team.update({ where: { id: w.b.teamId }, data: { leaseMaxLifetimeSeconds: 3 } });
  const agent = w.client(w.b.keys.agent);
  const r = await agent.createRun({ taskId: "lifetime", leaseTtlSeconds: 2 });
  const l0 = await leaseOf(r.leaseId);
  expect(l0.maxValidUntil!.getTime() - l0.createdAt.getTime()).toBe(3000);
  const decisions: string[] = [];
  const started = Date.now();
  while (Date.now() - started < 4500) {
    const ans = await agent.gate({ runId: r.runId, leaseId: r.leaseId, epoch: r.epoch, operationId: newId("op"), tool: "Read" });
    decisions.push(ans.reason);
    expect((await leaseOf(r.leaseId)).validUntil.getTime()).toBeLessThanOrEqual(l0.maxValidUntil!.getTime());
    await sleep(300);
  }
  expect(decisions[0]).toBe("allowed");
  expect(decisions.at(-1)).toBe("lease_expired");
  await prisma().team.update({ where: { id: w.b.teamId }, data: { leaseMaxLifetimeSeconds: 7 * 24 * 3600 } });
});

test("a hold and a deny do not renew; a child's calls renew its ancestors' leases too", async () => {
  const agent = w.client(w.a.keys.agent);
  const admin = w.client(w.a.keys.admin);
  const root = await agent.createRun({ taskId: "chain", leaseTtlSeconds: 2 });
  const child = await agent.createRun({ taskId: "chain", parentRunId: root.runId, leaseTtlSeconds: 2 });
  await sleep(1200);
  const before = await leaseOf(root.leaseId);
  const ask = () => agent.gate({ runId: child.runId, leaseId: child.leaseId, epoch: child.epoch, operationId: newId("op"), tool: "Bash" });
  expect((await ask()).decision).toBe("allow");
  const [rootAfter, childAfter] = [await leaseOf(root.leaseId), await leaseOf(child.leaseId)];
  expect(rootAfter.validUntil.getTime()).toBeGreaterThan(before.validUntil.getTime());
  expect(childAfter.validUntil.getTime()).toBeLessThanOrEqual(rootAfter.validUntil.getTime());

  await admin.pause(root.runId, "renewal test");
  await sleep(1200);
  const held = await leaseOf(child.leaseId);
  expect((await ask()).decision).toBe("hold");
  expect((await leaseOf(child.leaseId)).validUntil.getTime()).toBe(held.validUntil.getTime());

  const killed = await admin.kill(root.runId, "renewal test");
  expect(killed).toBeTruthy();
  const dead = await leaseOf(child.leaseId);
  await sleep(1200);
  expect((await ask()).decision).toBe("deny");
  expect((await leaseOf(child.leaseId)).validUntil.getTime()).toBe(dead.validUntil.getTime());
});

test("heartbeats of a running operation renew the lease too", async () => {
  const agent = w.client(w.a.keys.agent);
  const r = await agent.createRun({ taskId: "renew-heartbeat", leaseTtlSeconds: 2 });
  const operationId = newId("op");
  expect((await agent.gate({ runId: r.runId, leaseId: r.leaseId, epoch: r.epoch, operationId, tool: "deploy" })).decision).toBe("allow");
  const first = await leaseOf(r.leaseId);
  const started = Date.now();
  while (Date.now() - started < 3500) {
    const hb = await agent.heartbeat(operationId);
    expect(hb.continue, JSON.stringify(hb)).toBe(true);
    await sleep(400);
  }
  expect((await leaseOf(r.leaseId)).validUntil.getTime()).toBeGreaterThan(first.validUntil.getTime() + 1000);
});

// The SQL gate and lib/control/lease.ts renewChain agree: random chains (TTL, maximum lifetime, how
// much of the window is left, revoked or not) are asked once through the real gate function, and every
// lease's new validUntil is what renewChain computes for the decision's own clock reading.
test("the gate's renewal matches renewChain on random chains", async () => {
  const team = await makeTeam("renewal-oracle");
  const key = await makeKey(team.teamId, { kind: "agent" });
  const level = fc.record({
    ttlSeconds: fc.integer({ min: 1, max: 7200 }),
    leftFraction: fc.double({ min: 0.05, max: 1, noNaN: true }),
    lifetimeLeftSeconds: fc.integer({ min: 1, max: 20_000 }),
    legacy: fc.boolean(),
  });
  await fc.assert(
    fc.asyncProperty(fc.array(level, { minLength: 1, maxLength: 4 }), async (levels) => {
      const chain = await makeChain(
        team.teamId,
        levels.map(() => ({})),
      );
      const now = Date.now();
      // Leases as registration would leave them: each within its parent's validUntil and maximum.
      let parent: { validUntil: number; max: number } | null = null;
      const before: RenewableLease[] = [];
      for (const [i, lv] of levels.entries()) {
        const max = Math.min(now + lv.lifetimeLeftSeconds * 1000, parent?.max ?? Infinity);
        const validUntil = Math.min(now + Math.max(1000, lv.ttlSeconds * 1000 * lv.leftFraction), max, parent?.validUntil ?? Infinity);
        const l = { validUntil, ttlSeconds: lv.ttlSeconds, maxValidUntil: lv.legacy ? null : max, revokedAt: null };
        await prisma().lease.update({
          where: { id: chain[i]!.leaseId },
          data: {
            validUntil: new Date(validUntil),
            ttlSeconds: lv.ttlSeconds,
            maxValidUntil: l.maxValidUntil === null ? null : new Date(l.maxValidUntil),
          },
        });
        before.push({
          ...l,
          validUntil: (await prisma().lease.findUniqueOrThrow({ where: { id: chain[i]!.leaseId } })).validUntil.getTime(),
        });
        parent = { validUntil, max: l.maxValidUntil ?? validUntil };
      }
      const leaf = chain.at(-1)!;
      const operationId = newId("op");
      const ans = await gateCheck({
        keyHash: key.hash,
        runId: leaf.runId,
        leaseId: leaf.leaseId,
        epoch: leaf.epoch,
        operationId,
        tool: "t",
      });
      expect(ans).toMatchObject({ decision: "allow" });
      const at = (await prisma().gateDecision.findFirstOrThrow({ where: { operationId } })).at.getTime();
      const expected = renewChain(before, at);
      const after = await Promise.all(
        chain.map(async (r) => (await prisma().lease.findUniqueOrThrow({ where: { id: r.leaseId } })).validUntil.getTime()),
      );
      after.forEach((v, i) => expect(Math.abs(v - expected[i]!), `lease ${i}: ${v} vs ${expected[i]}`).toBeLessThanOrEqual(1));
    }),
    { numRuns: 25 },
  );
}, 120_000);
