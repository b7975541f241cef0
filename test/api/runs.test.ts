// Runs and child runs over real HTTP against the real database: registration, leases, idempotent
// native registration (raced), reads, lists, and every refusal (400 + nothing changed, 401, 403, 404).
import pg from "pg";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { prisma } from "../../lib/platform/db/prisma";
import { QuiesceApiError } from "../../lib/agent/sdk/errors";
import { makeWorld, raw, snapshot, type World } from "./fixtures";
import { verifyAuditChain } from "../../lib/modules/audit/audit";
import { CONTROL_CHANNEL } from "../../lib/schemas/control-event";

/** A real LISTEN on the database the API writes to. */
async function pgListen(channel: string): Promise<{ received: string[]; close(): Promise<void> }> {
  const client = new pg.Client({ connectionString: process.env.DATABASE_URL });
  await client.connect();
  const received: string[] = [];
  client.on("notification", (n) => {
    if (n.payload) received.push(n.payload);
  });
  await client.query(`LISTEN ${channel}`);
  return { received, close: () => client.end() };
}

async function until(ok: () => boolean, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) throw new Error("not within 5 s");
    await new Promise((r) => setTimeout(r, 20));
  }
}

let w: World;
beforeAll(async () => {
  w = await makeWorld();
});
afterAll(async () => {
  await w?.close();
});

describe("POST /api/v1/runs", () => {
  test("registers a root run with its lease (201), as stored in the database", async () => {
    const r = await w
      .client(w.a.keys.agent)
      .createRun({ taskId: "task-root", title: "Root", harness: "claude-code", scopes: ["deploy", "read"], leaseTtlSeconds: 600 });
    expect(r.status).toBe(201);
    expect(r).toMatchObject({ epoch: 1, parentRunId: null, rootRunId: r.runId, scopes: ["deploy", "read"], created: true });
    expect(r.runId).toMatch(/^run_/);
    expect(r.leaseId).toMatch(/^lease_/);
    const run = await prisma().run.findUniqueOrThrow({ where: { id: r.runId } });
    expect(run).toMatchObject({
      teamId: w.a.teamId,
      path: [r.runId],
      depth: 0,
      harness: "claude_code",
      lifecycle: "normal",
      breaker: "closed",
    });
    const lease = await prisma().lease.findUniqueOrThrow({ where: { id: r.leaseId } });
    expect(lease.path).toEqual([r.leaseId]);
    expect(lease.validUntil.toISOString()).toBe(r.validUntil);
    const ttl = lease.validUntil.getTime() - lease.createdAt.getTime();
    expect(ttl).toBeGreaterThan(590_000);
    expect(ttl).toBeLessThanOrEqual(600_000);
  });

  test("a plain root (one statement, no interactive transaction) stores what the transactional path stores, audited and announced", async () => {
    const agent = w.client(w.a.keys.agent);
    const body = { title: "Same", harness: "codex" as const, scopes: ["deploy"], leaseTtlSeconds: 600, drill: true };
    const listener = await pgListen(CONTROL_CHANNEL);
    try {
      const fast = await agent.createRun({ ...body, taskId: "fast-root" });
      // A native session takes the transactional path (it is looked up under a lock first).
      const slow = await agent.createRun({ ...body, taskId: "slow-root", native: { sessionId: `s-${Date.now()}` } });
      expect(fast.status).toBe(201);
      const strip = <T extends Record<string, unknown>>(o: T, keys: string[]) =>
        Object.fromEntries(Object.entries(o).filter(([k]) => !keys.includes(k)));
      const runOf = async (id: string) =>
        strip(await prisma().run.findUniqueOrThrow({ where: { id } }), [
          "id",
          "taskId",
          "rootRunId",
          "path",
          "nativeSessionId",
          "createdAt",
          "lifecycleChangedAt",
          "breakerChangedAt",
        ]);
      expect(await runOf(fast.runId)).toEqual(await runOf(slow.runId));
      expect((await prisma().run.findUniqueOrThrow({ where: { id: fast.runId } })).path).toEqual([fast.runId]);
      const leaseOf = async (id: string) =>
        strip(await prisma().lease.findUniqueOrThrow({ where: { id } }), [
          "id",
          "runId",
          "path",
          "validUntil",
          "maxValidUntil",
          "createdAt",
        ]);
      expect(await leaseOf(fast.leaseId)).toEqual(await leaseOf(slow.leaseId));
      expect((await prisma().lease.findUniqueOrThrow({ where: { id: fast.leaseId } })).path).toEqual([fast.leaseId]);
      const auditOf = async (runId: string) => prisma().auditEvent.findFirstOrThrow({ where: { target: runId, action: "run.register" } });
      const [a, b] = [await auditOf(fast.runId), await auditOf(slow.runId)];
      expect(a.actor).toBe(b.actor);
      expect(a.after).toEqual({
        ...(b.after as object),
        taskId: "fast-root",
        rootRunId: fast.runId,
        leaseId: fast.leaseId,
        validUntil: fast.validUntil,
      });
      expect(await verifyAuditChain(prisma(), w.a.teamId)).toBeNull();
      expect(await prisma().$queryRawUnsafe("SELECT * FROM audit_intents")).toEqual([]);
      await until(() => listener.received.some((m) => JSON.parse(m).rootRunId === fast.runId));
      expect(JSON.parse(listener.received.find((m) => JSON.parse(m).rootRunId === fast.runId)!)).toEqual({
        kind: "run",
        teamId: w.a.teamId,
        rootRunId: fast.runId,
        runIds: [fast.runId],
      });
    } finally {
      await listener.close();
    }
  });

  test("a child on the raw path stores what the transactional path stores; a lease of another run is refused", async () => {
    const agent = w.client(w.a.keys.agent);
    const root = await agent.createRun({ taskId: "two-paths", scopes: ["a", "b"], drill: true });
    const other = await agent.createRun({ taskId: "two-paths-other" });
    const body = { parentRunId: root.runId, parentLeaseId: root.leaseId, scopes: ["a"], leaseTtlSeconds: 300 };
    const fast = await agent.createRun({ ...body, taskId: "child-fast" });
    const slow = await agent.createRun({ ...body, taskId: "child-slow", native: { sessionId: `c-${Date.now()}` } });
    const strip = (o: Record<string, unknown>, keys: string[]) => Object.fromEntries(Object.entries(o).filter(([k]) => !keys.includes(k)));
    const RUN_VARIES = ["id", "taskId", "path", "nativeSessionId", "createdAt", "lifecycleChangedAt", "breakerChangedAt"];
    const [fr, sr] = await Promise.all([fast.runId, slow.runId].map((id) => prisma().run.findUniqueOrThrow({ where: { id } })));
    expect(strip(fr!, RUN_VARIES)).toEqual(strip(sr!, RUN_VARIES));
    expect(fr).toMatchObject({ parentRunId: root.runId, rootRunId: root.runId, path: [root.runId, fast.runId], depth: 1, isDrill: true });
    const LEASE_VARIES = ["id", "runId", "path", "validUntil", "maxValidUntil", "createdAt"];
    const [fl, sl] = await Promise.all([fast.leaseId, slow.leaseId].map((id) => prisma().lease.findUniqueOrThrow({ where: { id } })));
    expect(strip(fl!, LEASE_VARIES)).toEqual(strip(sl!, LEASE_VARIES));
    expect(fl).toMatchObject({ parentLeaseId: root.leaseId, path: [root.leaseId, fast.leaseId], scopes: ["a"] });
    const auditOf = (runId: string) => prisma().auditEvent.findFirstOrThrow({ where: { target: runId, action: "run.register" } });
    const [a, b] = [await auditOf(fast.runId), await auditOf(slow.runId)];
    expect(a.after).toEqual({ ...(b.after as object), taskId: "child-fast", leaseId: fast.leaseId, validUntil: fast.validUntil });
    expect(await verifyAuditChain(prisma(), w.a.teamId)).toBeNull();
    // A lease that is not the named parent's: 400, and nothing is written.
    const before = await prisma().run.count();
    await expect(agent.createRun({ taskId: "x", parentRunId: root.runId, parentLeaseId: other.leaseId })).rejects.toMatchObject({
      status: 400,
    });
    await expect(agent.createRun({ taskId: "x", parentLeaseId: "lease_missing" })).rejects.toMatchObject({ status: 404 });
    expect(await prisma().run.count()).toBe(before);
  });

  test("a child lease never outlives or out-scopes its parent's; path, root and depth are filled", async () => {
    const gw = w.client(w.a.keys.gateway);
    const root = await gw.createRun({ taskId: "tree", scopes: ["deploy", "read"], leaseTtlSeconds: 300 });
    const child = await gw.createRun({ taskId: "tree", parentRunId: root.runId, scopes: ["read"], leaseTtlSeconds: 7 * 24 * 3600 });
    expect(child).toMatchObject({ parentRunId: root.runId, rootRunId: root.runId, scopes: ["read"], created: true });
    expect(new Date(child.validUntil).getTime()).toBeLessThanOrEqual(new Date(root.validUntil).getTime());
    const grandchild = await gw.createRun({ taskId: "tree", parentLeaseId: child.leaseId });
    expect(grandchild.parentRunId).toBe(child.runId);
    expect(grandchild.scopes).toEqual(["read"]);
    const gc = await prisma().run.findUniqueOrThrow({ where: { id: grandchild.runId } });
    expect(gc).toMatchObject({ rootRunId: root.runId, path: [root.runId, child.runId, grandchild.runId], depth: 2 });
    const gcl = await prisma().lease.findUniqueOrThrow({ where: { id: grandchild.leaseId } });
    expect(gcl.path).toEqual([root.leaseId, child.leaseId, grandchild.leaseId]);
    expect(gcl.parentLeaseId).toBe(child.leaseId);

    const before = await snapshot(w.a.teamId);
    const err = await gw.createRun({ taskId: "tree", parentRunId: child.runId, scopes: ["deploy"] }).catch((e) => e);
    expect(err).toBeInstanceOf(QuiesceApiError);
    expect(err).toMatchObject({ status: 403 });
    expect(err.message).toContain("scopes");
    expect(await snapshot(w.a.teamId)).toEqual(before);
  });

  test("a child starts at its ancestry's current epoch", async () => {
    const gw = w.client(w.a.keys.gateway);
    const root = await gw.createRun({ taskId: "epochs" });
    await prisma().run.update({ where: { id: root.runId }, data: { epoch: 4 } });
    const child = await gw.createRun({ taskId: "epochs", parentRunId: root.runId });
    expect(child.epoch).toBe(4);
  });

  test("a killed parent cannot get new children (409) and nothing is written", async () => {
    const agent = w.client(w.a.keys.agent);
    const root = await agent.createRun({ taskId: "dead" });
    await prisma().run.update({ where: { id: root.runId }, data: { lifecycle: "killed" } });
    const before = await snapshot(w.a.teamId);
    await expect(agent.createRun({ taskId: "dead", parentRunId: root.runId })).rejects.toMatchObject({ status: 409, code: "conflict" });
    expect(await snapshot(w.a.teamId)).toEqual(before);
  });

  test("registering the same native session + agent again returns the same run (200), even when raced", async () => {
    const agent = w.client(w.a.keys.agent);
    const native = { sessionId: `sess-${Date.now()}`, agentId: "main" };
    const answers = await Promise.all(Array.from({ length: 8 }, () => agent.createRun({ taskId: "hook", harness: "claude_code", native })));
    const ids = new Set(answers.map((a) => a.runId));
    expect(ids.size).toBe(1);
    expect(answers.filter((a) => a.status === 201)).toHaveLength(1);
    expect(answers.filter((a) => a.status === 200 && a.created === false)).toHaveLength(7);
    expect(new Set(answers.map((a) => a.leaseId)).size).toBe(1);
    expect(await prisma().run.count({ where: { teamId: w.a.teamId, nativeSessionId: native.sessionId } })).toBe(1);
    // A subagent of the same session is a different run (child of the session's run), itself idempotent.
    const root = answers[0]!;
    const sub1 = await agent.createRun({
      taskId: "hook",
      parentRunId: root.runId,
      native: { sessionId: native.sessionId, agentId: "sub-1" },
    });
    const sub2 = await agent.createRun({
      taskId: "hook",
      parentRunId: root.runId,
      native: { sessionId: native.sessionId, agentId: "sub-1" },
    });
    expect(sub1.status).toBe(201);
    expect(sub2).toMatchObject({ status: 200, runId: sub1.runId, created: false });
    // Another team's identical native ids are another run.
    const other = await w.client(w.b.keys.agent).createRun({ taskId: "hook", native });
    expect(other.status).toBe(201);
    expect(other.runId).not.toBe(root.runId);
  });

  test("malformed bodies answer 400 naming the field, and change nothing", async () => {
    const before = await snapshot(w.a.teamId);
    const cases: [unknown, string][] = [
      [{}, "body.taskId"],
      [{ taskId: "" }, "body.taskId"],
      [{ taskId: "x", leaseTtlSeconds: "ten" }, "body.leaseTtlSeconds"],
      [{ taskId: "x", leaseTtlSeconds: 10 ** 9 }, "body.leaseTtlSeconds"],
      [{ taskId: "x", harness: "vim" }, "body.harness"],
      [{ taskId: "x", scopes: "deploy" }, "body.scopes"],
      [{ taskId: "x", native: { sessionId: 5 } }, "body.native.sessionId"],
      [{ taskId: "x", bogus: true }, "body.bogus"],
    ];
    for (const [body, field] of cases) {
      const r = await raw(w.server.url, "POST", "/api/v1/runs", { key: w.a.keys.agent, body });
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.json.error.code).toBe("bad_request");
      expect(r.json.error.message).toContain(field);
    }
    const bad = await raw(w.server.url, "POST", "/api/v1/runs", { key: w.a.keys.agent, rawBody: "{not json" });
    expect(bad.status).toBe(400);
    expect(bad.json.error.message).toMatch(/^body: /);
    const badScope = await raw(w.server.url, "POST", "/api/v1/runs", { key: w.a.keys.agent, body: { taskId: "x", scopes: ["has space"] } });
    expect(badScope.status).toBe(400);
    expect(badScope.json.error.message).toContain("scopes");
    expect(await snapshot(w.a.teamId)).toEqual(before);
  });

  test("another team's parent answers 404, exactly like a missing one", async () => {
    const theirs = await w.client(w.b.keys.agent).createRun({ taskId: "b-root" });
    const mine = w.client(w.a.keys.agent);
    const e1 = await mine.createRun({ taskId: "x", parentRunId: theirs.runId }).catch((e) => e);
    const e2 = await mine.createRun({ taskId: "x", parentRunId: "run_doesnotexist" }).catch((e) => e);
    expect(e1).toMatchObject({ status: 404, code: "not_found" });
    expect(e2).toMatchObject({ status: 404, code: "not_found", message: e1.message });
    await expect(mine.createRun({ taskId: "x", parentLeaseId: theirs.leaseId })).rejects.toMatchObject({ status: 404 });
  });

  test("only agent and gateway keys (and admins) register runs: worker and operator keys get 403", async () => {
    for (const k of [w.a.keys.worker, w.a.keys.operator, w.a.keys.viewerOperator]) {
      await expect(w.client(k).createRun({ taskId: "nope" })).rejects.toMatchObject({ status: 403, code: "forbidden" });
    }
  });
});

describe("GET /api/v1/runs/{runId} and GET /api/v1/runs", () => {
  test("reads a run with its children and leases; another team's run is 404", async () => {
    const agent = w.client(w.a.keys.agent);
    const root = await agent.createRun({ taskId: "read-me", title: "Readable" });
    const c1 = await agent.createRun({ taskId: "read-me", parentRunId: root.runId });
    const c2 = await agent.createRun({ taskId: "read-me", parentRunId: root.runId });
    const v = await w.client(w.a.keys.worker).getRun(root.runId);
    expect(v).toMatchObject({ runId: root.runId, lifecycle: "normal", breaker: "closed", epoch: 1, parentRunId: null, title: "Readable" });
    expect(v.children.map((c) => c.runId).sort()).toEqual([c1.runId, c2.runId].sort());
    // A lease id is a capability: the holder sees it, another key of the same team does not.
    expect(v.leases.map((l) => l.leaseId)).toEqual([null]);
    expect((await agent.getRun(root.runId)).leases.map((l) => l.leaseId)).toEqual([root.leaseId]);
    expect((await agent.getRun(c1.runId)).leases.map((l) => l.leaseId)).toEqual([c1.leaseId]);
    const theirs = w.client(w.b.keys.agent);
    const e1 = await theirs.getRun(root.runId).catch((e) => e);
    const e2 = await theirs.getRun("run_missing").catch((e) => e);
    expect(e1).toMatchObject({ status: 404, code: "not_found" });
    expect(e2.message).toBe(e1.message);
  });

  test("lists newest first with a cursor, filters by lifecycle and text, never shows another team", async () => {
    const agent = w.client(w.a.keys.agent);
    const tag = `list-${Date.now()}`;
    const made: string[] = [];
    for (let i = 0; i < 5; i++) made.push((await agent.createRun({ taskId: `${tag}-${i}` })).runId);
    await prisma().run.update({ where: { id: made[1]! }, data: { lifecycle: "paused" } });
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await agent.listRuns({ q: tag, limit: 2, cursor });
      expect(page.runs.length).toBeLessThanOrEqual(2);
      seen.push(...page.runs.map((r) => r.runId));
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
    expect(seen).toEqual([...made].reverse());
    const paused = await agent.listRuns({ q: tag, lifecycle: "paused" });
    expect(paused.runs.map((r) => r.runId)).toEqual([made[1]]);
    const theirs = await w.client(w.b.keys.agent).listRuns({ q: tag });
    expect(theirs.runs).toEqual([]);
    // q means the same as in the console: an id matches exactly, a name by substring in any case
    expect((await agent.listRuns({ q: made[2]! })).runs.map((r) => r.runId)).toEqual([made[2]]);
    expect((await agent.listRuns({ q: made[2]!.slice(0, -2) })).runs).toEqual([]);
    expect((await agent.listRuns({ q: tag.toUpperCase() })).runs).toHaveLength(5);
    const bad = await raw(w.server.url, "GET", "/api/v1/runs?limit=0", { key: w.a.keys.agent });
    expect(bad.status).toBe(400);
    expect(bad.json.error.message).toContain("query.limit");
    const badCursor = await raw(w.server.url, "GET", "/api/v1/runs?cursor=zzz", { key: w.a.keys.agent });
    expect(badCursor.status).toBe(400);
    expect(badCursor.json.error.message).toContain("cursor");
  });
});

describe("authentication", () => {
  test("missing, malformed, unknown, revoked and expired keys answer 401", async () => {
    const noAuth = await raw(w.server.url, "GET", "/api/v1/runs", { key: null });
    expect(noAuth.status).toBe(401);
    expect(noAuth.json.error.code).toBe("unauthenticated");
    const res = await fetch(`${w.server.url}/api/v1/runs`, { headers: { authorization: "Basic abc" } });
    expect(res.status).toBe(401);
    expect((await raw(w.server.url, "GET", "/api/v1/runs", { key: "qk_agent_nope" })).status).toBe(401);

    const { createApiKey, revokeApiKey } = await import("../../lib/modules/keys/api-keys");
    const sys = { type: "system", name: "test" } as const;
    const revoked = await createApiKey(sys, { teamId: w.a.teamId, kind: "agent", name: "to revoke" });
    expect((await raw(w.server.url, "GET", "/api/v1/runs", { key: revoked.secret })).status).toBe(200);
    await revokeApiKey(sys, revoked.id);
    expect((await raw(w.server.url, "GET", "/api/v1/runs", { key: revoked.secret })).status).toBe(401);
    expect(
      (
        await raw(w.server.url, "POST", "/api/v1/gate", {
          key: revoked.secret,
          body: { runId: "r", leaseId: "l", epoch: 1, operationId: "o", tool: "t" },
        })
      ).status,
    ).toBe(401);

    const expired = await createApiKey(sys, { teamId: w.a.teamId, kind: "agent", name: "expired", expiresAt: new Date(Date.now() - 1000) });
    expect((await raw(w.server.url, "GET", "/api/v1/runs", { key: expired.secret })).status).toBe(401);
  });

  test("keys are stored only as sha256 hashes", async () => {
    const rows = await prisma().apiKey.findMany({ where: { teamId: w.a.teamId } });
    const secrets = Object.values(w.a.keys);
    for (const r of rows) {
      expect(r.secretHash).toMatch(/^[0-9a-f]{64}$/);
      for (const s of secrets) expect(JSON.stringify(r)).not.toContain(s);
    }
  });
});

describe("request ids", () => {
  test("a well-formed x-request-id is echoed; a missing or malformed one is replaced by a fresh id", async () => {
    const get = (headers: Record<string, string>) =>
      fetch(`${w.server.url}/api/v1/runs`, { headers: { authorization: `Bearer ${w.a.keys.agent}`, ...headers } });
    const mine = await get({ "x-request-id": "trace-abc.123" });
    expect(mine.status).toBe(200);
    expect(mine.headers.get("x-request-id")).toBe("trace-abc.123");
    const fresh = await get({});
    expect(fresh.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
    const bad = await get({ "x-request-id": "x".repeat(300) });
    expect(bad.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
    // errors carry it too
    const refused = await fetch(`${w.server.url}/api/v1/runs`, { headers: { "x-request-id": "no-key-1" } });
    expect(refused.status).toBe(401);
    expect(refused.headers.get("x-request-id")).toBe("no-key-1");
  });
});
