// Gate and operations over real HTTP: ask the gate, register queued / scheduled / retry work, admit it
// at dequeue, heartbeat, complete with an effect receipt, the runtime breaker, and the refusals.
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { prisma } from "../../lib/platform/db/prisma";
import { makeWorld, raw, snapshot, type World } from "./fixtures";

let w: World;
beforeAll(async () => {
  w = await makeWorld();
});
afterAll(async () => {
  await w?.close();
});

let seq = 0;
const opId = (p: string) => `${p}-${Date.now().toString(36)}-${++seq}`;

async function run(team = w.a) {
  return w.client(team.keys.agent).createRun({ taskId: "ops" });
}

describe("POST /api/v1/gate", () => {
  test("allow starts the operation; the same operationId again replays; a finished one is already_applied", async () => {
    const r = await run();
    const agent = w.client(w.a.keys.agent);
    const body = { runId: r.runId, leaseId: r.leaseId, epoch: r.epoch, operationId: opId("call"), tool: "deploy" };
    expect(await agent.gate(body)).toMatchObject({ decision: "allow", reason: "allowed", currentEpoch: 1 });
    expect(await agent.gate(body)).toMatchObject({ decision: "allow", reason: "allowed" });
    expect(await prisma().operation.count({ where: { teamId: w.a.teamId, operationId: body.operationId } })).toBe(1);
    const done = await agent.complete(body.operationId, {
      outcome: "succeeded",
      effect: { providerOperationId: "dep-1", detail: { version: "1.2.3" } },
    });
    expect(done).toMatchObject({ operationId: body.operationId, state: "succeeded", breaker: "closed" });
    expect(done.effectReceiptId).toMatch(/^eff_/);
    const replay = await agent.gate(body);
    expect(replay).toMatchObject({ decision: "deny", reason: "already_applied" });
    expect(replay.operation?.effectReceipt).toMatchObject({ providerOperationId: "dep-1", detail: { version: "1.2.3" } });
  });

  test("a stale epoch is denied; another team's run answers missing_state like a missing one", async () => {
    const r = await run();
    const agent = w.client(w.a.keys.agent);
    await prisma().run.update({ where: { id: r.runId }, data: { epoch: 3 } });
    expect(await agent.gate({ runId: r.runId, leaseId: r.leaseId, epoch: 1, operationId: opId("stale"), tool: "x" })).toMatchObject({
      decision: "deny",
      reason: "stale_epoch",
      currentEpoch: 3,
    });
    const theirs = await run(w.b);
    const cross = await agent.gate({ runId: theirs.runId, leaseId: theirs.leaseId, epoch: 1, operationId: opId("cross"), tool: "x" });
    const missing = await agent.gate({ runId: "run_missing", leaseId: "lease_missing", epoch: 1, operationId: opId("miss"), tool: "x" });
    expect(cross).toEqual(missing);
    expect(cross).toMatchObject({ decision: "deny", reason: "missing_state", currentEpoch: null });
    expect(await prisma().operation.count({ where: { runId: theirs.runId } })).toBe(0);
  });

  test("bad input is 400 naming the field; no key is 401; nothing is recorded", async () => {
    const r = await run();
    const before = await snapshot(w.a.teamId);
    const ok = { runId: r.runId, leaseId: r.leaseId, epoch: 1, operationId: "bad-1", tool: "x" };
    for (const [patch, field] of [
      [{ epoch: "1" }, "body.epoch"],
      [{ epoch: -1 }, "body.epoch"],
      [{ operationId: "" }, "body.operationId"],
      [{ tool: undefined }, "body.tool"],
    ] as const) {
      const res = await raw(w.server.url, "POST", "/api/v1/gate", { key: w.a.keys.agent, body: { ...ok, ...patch } });
      expect(res.status).toBe(400);
      expect(res.json.error.message).toContain(field);
    }
    expect((await raw(w.server.url, "POST", "/api/v1/gate", { body: ok })).status).toBe(401);
    expect((await raw(w.server.url, "POST", "/api/v1/gate", { key: "qk_agent_wrong", body: ok })).status).toBe(401);
    expect(await snapshot(w.a.teamId)).toEqual(before);
  });
});

describe("registered work: register → admit → heartbeat → complete", () => {
  test("queued work is registered (201), idempotent (200), admitted to running, and completes", async () => {
    const r = await run();
    const worker = w.client(w.a.keys.worker);
    const id = opId("job");
    const body = {
      runId: r.runId,
      leaseId: r.leaseId,
      epoch: r.epoch,
      operationId: id,
      kind: "queued" as const,
      tool: "email.send",
      providerName: "pg-boss:emails",
      providerJobId: "job-1",
    };
    expect(await worker.registerOperation(body)).toEqual({ operationId: id, state: "queued", created: true, status: 201 });
    expect(await worker.registerOperation(body)).toEqual({ operationId: id, state: "queued", created: false, status: 200 });
    const row = await prisma().operation.findFirstOrThrow({ where: { teamId: w.a.teamId, operationId: id } });
    expect(row).toMatchObject({
      kind: "queued",
      state: "queued",
      epochStamp: 1,
      providerName: "pg-boss:emails",
      providerJobId: "job-1",
      leaseId: r.leaseId,
    });

    const hb0 = await worker.heartbeat(id);
    expect(hb0).toMatchObject({ continue: true, reason: "allowed" });
    expect(await worker.admit(id)).toMatchObject({ decision: "allow", reason: "allowed", currentEpoch: 1 });
    expect((await prisma().operation.findUniqueOrThrow({ where: { id: row.id } })).state).toBe("running");
    await w.client(w.a.keys.operator).pause(r.runId, "hold the line");
    expect(await worker.heartbeat(id)).toMatchObject({ continue: true, reason: "paused" });
    await w.client(w.a.keys.operator).resume(r.runId, "go on");
    const done = await worker.complete(id, { outcome: "failed", detail: { error: "smtp 550" } });
    expect(done).toMatchObject({ state: "failed", effectReceiptId: null });
    expect(await worker.complete(id, { outcome: "failed" })).toMatchObject({ state: "failed" });
    await expect(worker.complete(id, { outcome: "succeeded" })).rejects.toMatchObject({ status: 409 });
  });

  test("concurrent registrations of one operationId create exactly one operation", async () => {
    const r = await run();
    const worker = w.client(w.a.keys.worker);
    const body = { runId: r.runId, leaseId: r.leaseId, epoch: 1, operationId: opId("race"), kind: "queued" as const, tool: "t" };
    const answers = await Promise.all(Array.from({ length: 8 }, () => worker.registerOperation(body)));
    expect(answers.filter((a) => a.status === 201)).toHaveLength(1);
    expect(answers.every((a) => a.state === "queued")).toBe(true);
    expect(await prisma().operation.count({ where: { teamId: w.a.teamId, operationId: body.operationId } })).toBe(1);
  });

  test("the unique-index race between registrations is answered as a repeat (direct dal calls, no HTTP in between)", async () => {
    const { authenticateKey } = await import("../../lib/modules/keys/api-keys");
    const { registerOperation } = await import("../../lib/modules/runs/operations");
    const p = (await authenticateKey(w.a.keys.worker))!;
    const r = await run();
    for (let round = 0; round < 3; round++) {
      const body = { runId: r.runId, leaseId: r.leaseId, epoch: 1, operationId: opId("dal-race"), kind: "queued" as const, tool: "t" };
      const answers = await Promise.all(Array.from({ length: 10 }, () => registerOperation(p, body)));
      expect(answers.filter((a) => a.created)).toHaveLength(1);
      expect(await prisma().operation.count({ where: { teamId: w.a.teamId, operationId: body.operationId } })).toBe(1);
    }
  });

  test("scheduled and retry work wait as scheduled; a paused run may still enqueue, admission holds", async () => {
    const r = await run();
    const worker = w.client(w.a.keys.worker);
    await w.client(w.a.keys.operator).pause(r.runId, "not now");
    const later = new Date(Date.now() + 3600_000).toISOString();
    const s = await worker.registerOperation({
      runId: r.runId,
      leaseId: r.leaseId,
      epoch: 1,
      operationId: opId("sched"),
      kind: "scheduled",
      tool: "report",
      notBefore: later,
    });
    const rt = await worker.registerOperation({
      runId: r.runId,
      leaseId: r.leaseId,
      epoch: 1,
      operationId: opId("retry"),
      kind: "retry",
      tool: "report",
    });
    expect([s.state, rt.state]).toEqual(["scheduled", "scheduled"]);
    expect((await prisma().operation.findFirstOrThrow({ where: { teamId: w.a.teamId, operationId: rt.operationId } })).kind).toBe("retry");
    expect(await worker.admit(s.operationId)).toMatchObject({ decision: "hold", reason: "paused" });
    expect((await prisma().operation.findFirstOrThrow({ where: { teamId: w.a.teamId, operationId: s.operationId } })).state).toBe(
      "scheduled",
    );
  });

  test("a killed, revoked or stale-epoch run cannot enqueue (409 with the gate's reason); nothing is written", async () => {
    const worker = w.client(w.a.keys.worker);
    const killed = await run();
    await prisma().run.update({ where: { id: killed.runId }, data: { lifecycle: "killed", epoch: 2 } });
    const revoked = await run();
    await prisma().lease.update({ where: { id: revoked.leaseId }, data: { revokedAt: new Date() } });
    const stale = await run();
    await prisma().run.update({ where: { id: stale.runId }, data: { epoch: 5 } });
    const before = await snapshot(w.a.teamId);
    const reg = (r: typeof killed, epoch = 1) =>
      worker.registerOperation({ runId: r.runId, leaseId: r.leaseId, epoch, operationId: opId("x"), kind: "queued", tool: "t" });
    await expect(reg(killed, 2)).rejects.toMatchObject({ status: 409, code: "conflict", message: "run cannot take new work: killed" });
    await expect(reg(revoked)).rejects.toMatchObject({ status: 409, message: "run cannot take new work: lease_revoked" });
    await expect(reg(stale)).rejects.toMatchObject({ status: 409, message: "run cannot take new work: stale_epoch" });
    const expired = worker.registerOperation({
      runId: stale.runId,
      leaseId: stale.leaseId,
      epoch: 5,
      operationId: opId("exp"),
      kind: "queued",
      tool: "t",
      expiresAt: new Date(Date.now() - 1000).toISOString(),
    });
    await expect(expired).rejects.toMatchObject({ status: 409, message: "run cannot take new work: operation_expired" });
    expect(await snapshot(w.a.teamId)).toEqual(before);
  });

  test("registration refusals: 400 naming the field, 404 across teams, 403 for keys that may not register", async () => {
    const r = await run();
    const theirs = await run(w.b);
    const before = await snapshot(w.a.teamId);
    const ok = { runId: r.runId, leaseId: r.leaseId, epoch: 1, operationId: "reg-bad", kind: "queued", tool: "t" };
    for (const [patch, field] of [
      [{ kind: "call" }, "body.kind"],
      [{ notBefore: "tomorrow" }, "body.notBefore"],
      [{ epoch: 1.5 }, "body.epoch"],
      [{ leaseId: "lease_other" }, "leaseId"],
      [{ notBefore: "2030-01-02T00:00:00Z", expiresAt: "2030-01-01T00:00:00Z" }, "expiresAt"],
    ] as const) {
      const res = await raw(w.server.url, "POST", "/api/v1/operations", { key: w.a.keys.worker, body: { ...ok, ...patch } });
      expect(res.status, JSON.stringify(patch)).toBe(400);
      expect(res.json.error.message).toContain(field);
    }
    const cross = await raw(w.server.url, "POST", "/api/v1/operations", {
      key: w.a.keys.worker,
      body: { ...ok, runId: theirs.runId, leaseId: theirs.leaseId },
    });
    expect(cross.status).toBe(404);
    const op = await raw(w.server.url, "POST", "/api/v1/operations", { key: w.a.keys.operator, body: ok });
    expect(op.status).toBe(403);
    expect(await snapshot(w.a.teamId)).toEqual(before);
    expect(await prisma().operation.count({ where: { runId: theirs.runId } })).toBe(0);
  });

  test("admit, heartbeat and complete of an unknown or other team's operation answer 404", async () => {
    const theirs = await run(w.b);
    const id = opId("theirs");
    await w
      .client(w.b.keys.worker)
      .registerOperation({ runId: theirs.runId, leaseId: theirs.leaseId, epoch: 1, operationId: id, kind: "queued", tool: "t" });
    const mine = w.client(w.a.keys.worker);
    for (const opid of [id, "op-never-registered"]) {
      await expect(mine.admit(opid)).rejects.toMatchObject({ status: 404 });
      await expect(mine.heartbeat(opid)).rejects.toMatchObject({ status: 404 });
      await expect(mine.complete(opid, { outcome: "succeeded" })).rejects.toMatchObject({ status: 404 });
    }
    expect((await prisma().operation.findFirstOrThrow({ where: { teamId: w.b.teamId, operationId: id } })).state).toBe("queued");
  });

  test("complete refuses work that is not running, and bad bodies, changing nothing", async () => {
    const r = await run();
    const worker = w.client(w.a.keys.worker);
    const id = opId("notrunning");
    await worker.registerOperation({ runId: r.runId, leaseId: r.leaseId, epoch: 1, operationId: id, kind: "queued", tool: "t" });
    const before = await snapshot(w.a.teamId);
    await expect(worker.complete(id, { outcome: "succeeded" })).rejects.toMatchObject({ status: 409 });
    const bad = await raw(w.server.url, "POST", `/api/v1/operations/${id}/complete`, { key: w.a.keys.worker, body: { outcome: "done" } });
    expect(bad.status).toBe(400);
    expect(bad.json.error.message).toContain("body.outcome");
    const badEffect = await raw(w.server.url, "POST", `/api/v1/operations/${id}/complete`, {
      key: w.a.keys.worker,
      body: { outcome: "succeeded", effect: { detail: 1 } },
    });
    expect(badEffect.status).toBe(400);
    expect(badEffect.json.error.message).toContain("body.effect.providerOperationId");
    expect(await snapshot(w.a.teamId)).toEqual(before);
  });
});

describe("runtime breaker", () => {
  test("five failures trip the run's breaker; the gate then denies breaker_open; the transition is audited", async () => {
    const r = await run();
    const agent = w.client(w.a.keys.agent);
    let last;
    for (let i = 0; i < 5; i++) {
      const id = opId("flaky");
      await agent.gate({ runId: r.runId, leaseId: r.leaseId, epoch: 1, operationId: id, tool: "http" });
      last = await agent.complete(id, { outcome: "failed" });
    }
    expect(last).toMatchObject({ breaker: "open" });
    const row = await prisma().run.findUniqueOrThrow({ where: { id: r.runId } });
    expect(row).toMatchObject({ breaker: "open", breakerFailures: 5, lifecycle: "normal", breakerChangedBy: "runtime" });
    expect(await agent.gate({ runId: r.runId, leaseId: r.leaseId, epoch: 1, operationId: opId("after"), tool: "http" })).toMatchObject({
      decision: "deny",
      reason: "breaker_open",
    });
    const audit = await prisma().auditEvent.findMany({
      where: { teamId: w.a.teamId, target: r.runId, action: { startsWith: "breaker." } },
    });
    expect(audit.map((a) => a.action)).toEqual(["breaker.tripped"]);
  });
});

describe("a report on a killed run tree", () => {
  test("is refused with 409 and kept as evidence", async () => {
    const r = await run();
    const agent = w.client(w.a.keys.agent);
    const id = opId("late");
    await agent.gate({ runId: r.runId, leaseId: r.leaseId, epoch: 1, operationId: id, tool: "deploy" });
    await prisma().run.update({ where: { id: r.runId }, data: { lifecycle: "killed", epoch: 2 } });
    const err = await agent.complete(id, { outcome: "succeeded", effect: { providerOperationId: "late-1" } }).catch((e) => e);
    expect(err).toMatchObject({
      status: 409,
      code: "conflict",
      message: "run killed: report kept as your claim (evidence, not a settlement)",
    });
    const late = await prisma().gateDecision.findFirst({ where: { runId: r.runId, operationId: id, source: "complete" } });
    expect(late).toMatchObject({ decision: "deny", reason: "killed" });
    // The holder's report is a claim: kept once, and the operation's own record is not changed by it.
    const op = await prisma().operation.findFirstOrThrow({ where: { operationId: id }, include: { claims: true, effectReceipts: true } });
    expect(op.claims).toMatchObject([{ outcome: "succeeded", providerOperationId: "late-1" }]);
    expect(op.effectReceipts).toEqual([]);
    expect(op.state).toBe("running");
  });
});
