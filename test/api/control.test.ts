// Operator control writes over real HTTP: pause / resume / breaker. Operator keys only; machine keys 403;
// another team 404; bad input 400 and nothing changes; lifecycle and breaker never write each other's
// columns; every write is audited (chain verifies) and announced on quiesce_control at commit.
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import pg from "pg";
import { prisma } from "../../lib/platform/db/prisma";
import { verifyAuditChain } from "../../lib/modules/audit/audit";
import { CONTROL_CHANNEL } from "../../lib/schemas/control-event";
import { makeWorld, raw, snapshot, type World } from "./fixtures";

let w: World;
beforeAll(async () => {
  w = await makeWorld();
});
afterAll(async () => {
  await w?.close();
});

const newRoot = async (team = w.a) => {
  const agent = w.client(team.keys.agent);
  const root = await agent.createRun({ taskId: "control" });
  const child = await agent.createRun({ taskId: "control", parentRunId: root.runId });
  return { root, child };
};

const lifecycleCols = (id: string) =>
  prisma().run.findUniqueOrThrow({
    where: { id },
    select: { lifecycle: true, lifecycleChangedAt: true, lifecycleChangedBy: true, lifecycleReason: true },
  });
const breakerCols = (id: string) =>
  prisma().run.findUniqueOrThrow({
    where: { id },
    select: {
      breaker: true,
      breakerChangedAt: true,
      breakerChangedBy: true,
      breakerReason: true,
      breakerFailures: true,
      breakerProbeOpId: true,
    },
  });

describe("pause and resume", () => {
  test("pause holds the tree's next gate call; resume lets it through; both are audited", async () => {
    const { root, child } = await newRoot();
    const op = w.client(w.a.keys.operator);
    const agent = w.client(w.a.keys.agent);
    const ask = (operationId: string) =>
      agent.gate({ runId: child.runId, leaseId: child.leaseId, epoch: child.epoch, operationId, tool: "shell" });

    const paused = await op.pause(root.runId, "investigating a spike");
    expect(paused).toMatchObject({ runId: root.runId, lifecycle: "paused", reason: "investigating a spike", changed: true });
    expect(paused.changedBy).toContain(w.a.keyIds.operator);
    expect((await lifecycleCols(root.runId)).lifecycle).toBe("paused");
    expect(await ask("c-1")).toMatchObject({ decision: "hold", reason: "paused" });

    const again = await op.pause(root.runId, "double click");
    expect(again).toMatchObject({ lifecycle: "paused", changed: false, reason: "investigating a spike" });

    const resumed = await op.resume(root.runId, "spike explained");
    expect(resumed).toMatchObject({ lifecycle: "normal", changed: true });
    expect(await ask("c-1")).toMatchObject({ decision: "allow", reason: "allowed" });

    const audit = await prisma().auditEvent.findMany({ where: { teamId: w.a.teamId, target: root.runId }, orderBy: { id: "asc" } });
    expect(audit.map((a) => a.action)).toEqual(["run.register", "run.pause", "run.resume"]);
    expect(audit[1]!.before).toEqual({ lifecycle: "normal" });
    expect(audit[1]!.after).toMatchObject({ lifecycle: "paused", reason: "investigating a spike" });
  });

  test("resume on a killed run answers 409 and changes nothing", async () => {
    const { root } = await newRoot();
    await prisma().run.update({ where: { id: root.runId }, data: { lifecycle: "killed", epoch: 2 } });
    const before = await snapshot(w.a.teamId);
    await expect(w.client(w.a.keys.operator).resume(root.runId, "oops")).rejects.toMatchObject({ status: 409, code: "conflict" });
    await expect(w.client(w.a.keys.operator).pause(root.runId, "oops")).rejects.toMatchObject({ status: 409 });
    expect(await snapshot(w.a.teamId)).toEqual(before);
  });

  test("lifecycle actions never touch the breaker columns", async () => {
    const { root } = await newRoot();
    await w.client(w.a.keys.operator).breaker(root.runId, "trip", "dependency failing");
    const b0 = await breakerCols(root.runId);
    await w.client(w.a.keys.operator).pause(root.runId, "p");
    expect(await breakerCols(root.runId)).toEqual(b0);
    await w.client(w.a.keys.operator).resume(root.runId, "r");
    expect(await breakerCols(root.runId)).toEqual(b0);
  });

  test("the change is announced on the control channel when it commits", async () => {
    const { root } = await newRoot();
    const listener = new pg.Client({ connectionString: process.env.DATABASE_URL });
    await listener.connect();
    const got = new Promise<any>((resolve) => {
      listener.on("notification", (n) => {
        const e = JSON.parse(n.payload ?? "{}");
        if (e.rootRunId === root.runId && e.kind === "pause") resolve(e);
      });
    });
    await listener.query(`LISTEN ${CONTROL_CHANNEL}`);
    await w.client(w.a.keys.operator).pause(root.runId, "notify me");
    expect(await got).toMatchObject({ kind: "pause", teamId: w.a.teamId, rootRunId: root.runId, runIds: [root.runId] });
    await listener.end();
  });
});

describe("breaker trip and reset", () => {
  test("trip opens the breaker (gate denies breaker_open), reset closes it; lifecycle untouched", async () => {
    const { root, child } = await newRoot();
    const op = w.client(w.a.keys.operator);
    const l0 = await lifecycleCols(root.runId);
    const tripped = await op.breaker(root.runId, "trip", "upstream 500s");
    expect(tripped).toMatchObject({ runId: root.runId, breaker: "open", reason: "upstream 500s", changed: true });
    expect((await breakerCols(root.runId)).breaker).toBe("open");
    expect(await lifecycleCols(root.runId)).toEqual(l0);
    const d = await w
      .client(w.a.keys.agent)
      .gate({ runId: child.runId, leaseId: child.leaseId, epoch: child.epoch, operationId: "b-1", tool: "http" });
    expect(d).toMatchObject({ decision: "deny", reason: "breaker_open" });
    const reset = await op.breaker(root.runId, "reset", "upstream healthy");
    expect(reset).toMatchObject({ breaker: "closed", failures: 0, changed: true });
    expect(await lifecycleCols(root.runId)).toEqual(l0);
    const audit = await prisma().auditEvent.findMany({
      where: { teamId: w.a.teamId, target: root.runId, action: { startsWith: "breaker." } },
      orderBy: { id: "asc" },
    });
    expect(audit.map((a) => a.action)).toEqual(["breaker.trip", "breaker.reset"]);
  });

  test("a bad action or missing reason answers 400 naming the field; nothing changes", async () => {
    const { root } = await newRoot();
    const before = await snapshot(w.a.teamId);
    const cases: [string, unknown, string][] = [
      ["breaker", { action: "explode", reason: "x" }, "body.action"],
      ["breaker", { action: "trip" }, "body.reason"],
      ["breaker", { action: "trip", reason: "   " }, "body.reason"],
      ["pause", {}, "body.reason"],
      ["pause", { reason: 42 }, "body.reason"],
      ["resume", { reason: "" }, "body.reason"],
    ];
    for (const [verb, body, field] of cases) {
      const r = await raw(w.server.url, "POST", `/api/v1/runs/${root.runId}/${verb}`, { key: w.a.keys.operator, body });
      expect(r.status, `${verb} ${JSON.stringify(body)}`).toBe(400);
      expect(r.json.error.message).toContain(field);
    }
    expect(await snapshot(w.a.teamId)).toEqual(before);
  });
});

describe("who may write control state", () => {
  test("agent, worker and gateway keys get 403 on every control write; nothing changes", async () => {
    const { root } = await newRoot();
    const before = await snapshot(w.a.teamId);
    for (const k of [w.a.keys.agent, w.a.keys.worker, w.a.keys.gateway, w.a.keys.viewerOperator]) {
      const c = w.client(k);
      await expect(c.pause(root.runId, "x")).rejects.toMatchObject({ status: 403, code: "forbidden" });
      await expect(c.resume(root.runId, "x")).rejects.toMatchObject({ status: 403 });
      await expect(c.breaker(root.runId, "trip", "x")).rejects.toMatchObject({ status: 403 });
      await expect(c.breaker(root.runId, "reset", "x")).rejects.toMatchObject({ status: 403 });
      await expect(c.kill(root.runId, "x")).rejects.toMatchObject({ status: 403 });
    }
    expect(await snapshot(w.a.teamId)).toEqual(before);
  });

  test("another team's run answers 404 to its operator, like a missing run", async () => {
    const { root } = await newRoot(w.b);
    const before = await snapshot(w.b.teamId);
    const mine = w.client(w.a.keys.operator);
    for (const call of [
      () => mine.pause(root.runId, "x"),
      () => mine.resume(root.runId, "x"),
      () => mine.breaker(root.runId, "trip", "x"),
    ]) {
      await expect(call()).rejects.toMatchObject({ status: 404, code: "not_found", message: "run not found" });
    }
    await expect(mine.pause("run_nope", "x")).rejects.toMatchObject({ status: 404, message: "run not found" });
    expect(await snapshot(w.b.teamId)).toEqual(before);
  });

  test("an operator key loses its power on the next call when its user's role is lowered", async () => {
    const { root } = await newRoot();
    const op = w.client(w.a.keys.operator);
    await op.pause(root.runId, "while operator");
    await prisma().membership.update({
      where: { teamId_userId: { teamId: w.a.teamId, userId: w.a.users.operator } },
      data: { role: "viewer" },
    });
    try {
      await expect(op.resume(root.runId, "after demotion")).rejects.toMatchObject({ status: 403 });
      expect((await lifecycleCols(root.runId)).lifecycle).toBe("paused");
      // Still a member: may read.
      expect((await op.getRun(root.runId)).lifecycle).toBe("paused");
      await prisma().membership.delete({ where: { teamId_userId: { teamId: w.a.teamId, userId: w.a.users.operator } } });
      await expect(op.getRun(root.runId)).rejects.toMatchObject({ status: 403 });
    } finally {
      await prisma().membership.upsert({
        where: { teamId_userId: { teamId: w.a.teamId, userId: w.a.users.operator } },
        create: { id: `mem_restore_${Date.now()}`, teamId: w.a.teamId, userId: w.a.users.operator, role: "operator" },
        update: { role: "operator" },
      });
    }
    await expect(op.resume(root.runId, "restored")).resolves.toMatchObject({ lifecycle: "normal" });
  });

  test("the team's audit chain verifies after all of the above", async () => {
    expect(await prisma().auditEvent.count({ where: { teamId: w.a.teamId } })).toBeGreaterThan(10);
    expect(await verifyAuditChain(prisma(), w.a.teamId)).toBeNull();
    expect(await verifyAuditChain(prisma(), w.b.teamId)).toBeNull();
  });
});
