// Fleet stop through the real route handlers (test/support/api-server), the real gate function and the
// real barrier engine in this process: POST /api/v1/stops (dry run, pause, kill), GET /api/v1/stops/{id}
// to the fleet receipt, POST /api/v1/stops/{id}/resume; who may, and that a filter never leaves the team.
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { prisma } from "../../lib/platform/db/prisma";
import { closePool } from "../../lib/platform/db/pool";
import { createApiKey } from "../../lib/modules/keys/api-keys";
import { setTeamStopSettings } from "../../lib/modules/members/team-settings";
import { runBarrierWorker } from "../../lib/modules/stop/engine/worker";
import { gateCheck } from "../../lib/modules/gate/statement";
import { canonicalJson, sha256Hex } from "../../lib/control/canonical";
import { StopDryRunResponse, StopView } from "../../lib/schemas/stops";
import { startApiServer, type ApiServer } from "../support/api-server";
import { makeKey, makeRun, opKey, type FixtureKey, type FixtureRun } from "../support/fixtures";
import { addOp, makeTeam, waitFor, type TeamFixture } from "../barrier/fixtures";

let api: ApiServer;
let team: TeamFixture;
let other: TeamFixture;
let keys: { operator: string; admin: string; viewer: string; agent: string; otherAdmin: string };
let gateKey: FixtureKey;
const system = { type: "system", name: "test" } as const;
const ac = new AbortController();
let engine: Promise<void>;

beforeAll(async () => {
  api = await startApiServer();
  team = await makeTeam();
  other = await makeTeam();
  await setTeamStopSettings(system, team.teamId, { quietPeriodMs: 100 });
  const k = (teamId: string, name: string, userId?: string) =>
    createApiKey(system, { teamId, kind: userId ? "operator" : "agent", name, ...(userId ? { userId } : {}) }).then((r) => r.secret);
  keys = {
    operator: await k(team.teamId, "op", team.users.operator.id),
    admin: await k(team.teamId, "admin", team.users.admin.id),
    viewer: await k(team.teamId, "viewer", team.users.viewer.id),
    agent: await k(team.teamId, "agent"),
    otherAdmin: await k(other.teamId, "other", other.users.admin.id),
  };
  gateKey = await makeKey(team.teamId, { kind: "agent" });
  engine = runBarrierWorker({ teamId: team.teamId, signal: ac.signal, pollMs: 200, claimMs: 3000, localSettleMs: 300, listen: true });
}, 120_000);

afterAll(async () => {
  ac.abort();
  await engine;
  await api?.close();
  await prisma().$disconnect();
  await closePool();
});

async function call(method: string, path: string, key: string, body?: unknown) {
  const res = await fetch(`${api.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json()) as any };
}

const ask = (r: FixtureRun) =>
  gateCheck({ keyHash: gateKey.hash, runId: r.runId, leaseId: r.leaseId, epoch: r.epoch, operationId: opKey("fleet"), tool: "t" });
const decisionOf = async (r: FixtureRun) => {
  const g = await ask(r);
  return g.ok ? `${g.decision}:${g.reason}` : g.code;
};

async function makeTask(
  prefix: string,
  spec: { harness?: "claude_code" | "codex" | "mcp" | "custom" } = {},
  parent?: FixtureRun,
): Promise<FixtureRun> {
  const r = await makeRun(team.teamId, {}, parent);
  await prisma().run.update({
    where: { id: r.runId },
    data: { taskId: `${prefix}-${r.runId}`, ...(spec.harness ? { harness: spec.harness } : {}) },
  });
  return r;
}

describe("fleet stop API", () => {
  test("who may: operator and admin yes; viewer and machine keys 403; bad input 400 naming the field, nothing written", async () => {
    const body = { action: "pause", filter: { taskPrefix: "nobody-" }, reason: "drill", dryRun: true };
    expect((await call("POST", "/api/v1/stops", keys.viewer, body)).status).toBe(403);
    expect((await call("POST", "/api/v1/stops", keys.agent, body)).status).toBe(403);
    expect((await call("POST", "/api/v1/stops", keys.operator, body)).status).toBe(200);
    expect((await call("POST", "/api/v1/stops", keys.admin, body)).status).toBe(200);
    const before = await prisma().stopScope.count();
    const bad1 = await call("POST", "/api/v1/stops", keys.operator, { action: "explode", reason: "x" });
    expect(bad1.status).toBe(400);
    expect(bad1.json.error.message).toContain("body.action");
    const bad2 = await call("POST", "/api/v1/stops", keys.operator, { action: "kill", filter: { status: ["sleeping"] }, reason: "x" });
    expect(bad2.status).toBe(400);
    expect(bad2.json.error.message).toContain("body.filter.status");
    const bad3 = await call("POST", "/api/v1/stops", keys.operator, {
      action: "kill",
      filter: { createdAfter: "2026-12-02T00:00:00Z", createdBefore: "2026-12-01T00:00:00Z" },
      reason: "x",
    });
    expect(bad3.status).toBe(400);
    expect(bad3.json.error.message).toContain("filter.createdBefore");
    expect((await call("POST", "/api/v1/stops", keys.operator, { action: "kill", reason: "" })).status).toBe(400);
    expect(await prisma().stopScope.count()).toBe(before);
  });

  test("dry run: the matched count and a sample, nothing written; another team's run ids never match", async () => {
    const a = await makeTask("dry", { harness: "codex" });
    await makeTask("dry", { harness: "codex" }, a);
    await makeTask("dry", { harness: "mcp" });
    const finished = await makeTask("dry", { harness: "codex" });
    await prisma().run.update({ where: { id: finished.runId }, data: { finishedAt: new Date() } });
    // The codex root has a call in flight: the dry run counts it as working now (docs/console.md#run-activity).
    const root = await prisma().run.findUniqueOrThrow({ where: { id: a.runId } });
    await prisma().operation.create({
      data: {
        id: `op_dry_${a.runId}`,
        teamId: root.teamId,
        operationId: `dry-op-${a.runId}`,
        runId: a.runId,
        epochStamp: 1,
        kind: "call",
        tool: "deploy",
        state: "running",
        startedAt: new Date(),
      },
    });
    const before = await prisma().stopScope.count();
    const r = await call("POST", "/api/v1/stops", keys.operator, {
      action: "kill",
      filter: { taskPrefix: "dry-", harness: ["codex"] },
      reason: "incident",
      dryRun: true,
    });
    expect(r.status).toBe(200);
    const body = StopDryRunResponse.parse(r.json);
    // the codex root and its child (covered through its parent); the finished one is not stopped again
    expect(body).toMatchObject({ dryRun: true, matched: 2, barrierTargets: 1, working: 1 });
    expect(body.sample.map((s) => s.harness).sort()).toEqual(["codex", "codex"]);
    expect(await prisma().stopScope.count()).toBe(before);
    // the other team's admin naming our run ids covers nothing
    const foreign = await call("POST", "/api/v1/stops", keys.otherAdmin, {
      action: "kill",
      filter: { runIds: [a.runId] },
      reason: "x",
      dryRun: true,
    });
    expect(foreign.json).toMatchObject({ matched: 0, barrierTargets: 0 });
    const foreignKill = await call("POST", "/api/v1/stops", keys.otherAdmin, {
      action: "kill",
      filter: { runIds: [a.runId] },
      reason: "x",
    });
    expect(foreignKill.status).toBe(202);
    // a kill that matched nothing is complete at once, with an empty fleet receipt
    expect(foreignKill.json).toMatchObject({ matched: 0, barriers: { total: 0 }, receipt: { decision: "stopped_and_quiet" } });
    expect(await decisionOf(a)).toBe("allow:allowed");
    // and their scope is not ours to read
    expect((await call("GET", `/api/v1/stops/${foreignKill.json.stopId}`, keys.operator)).status).toBe(404);
  });

  test("pause scope: matching runs (and runs created later) hold, others allow; resume lifts it; audited", async () => {
    const a = await makeTask("pz", { harness: "claude_code" });
    const child = await makeTask("pz", {}, a);
    const outside = await makeTask("other");
    const r = await call("POST", "/api/v1/stops", keys.operator, {
      action: "pause",
      filter: { taskPrefix: "pz-" },
      reason: "investigating",
    });
    expect(r.status).toBe(202);
    const view = StopView.parse(r.json);
    expect(view).toMatchObject({ action: "pause", dispatchStopped: true, matched: 2, barriers: { total: 0 } });
    expect(await decisionOf(a)).toBe("hold:paused");
    expect(await decisionOf(child)).toBe("hold:paused");
    expect(await decisionOf(outside)).toBe("allow:allowed");
    const later = await makeTask("pz");
    expect(await decisionOf(later)).toBe("hold:paused");
    // no run was changed: the scope alone holds them
    expect((await prisma().run.findUniqueOrThrow({ where: { id: a.runId } })).lifecycle).toBe("normal");

    expect((await call("POST", `/api/v1/stops/${view.stopId}/resume`, keys.viewer, { reason: "x" })).status).toBe(403);
    const lifted = await call("POST", `/api/v1/stops/${view.stopId}/resume`, keys.operator, { reason: "all clear" });
    expect(lifted.status).toBe(200);
    expect(lifted.json).toMatchObject({ dispatchStopped: false, liftedAt: expect.any(String) });
    expect(await decisionOf(a)).toBe("allow:allowed");
    expect(await decisionOf(later)).toBe("allow:allowed");
    const audit = await prisma().auditEvent.findMany({ where: { teamId: team.teamId, target: view.stopId }, orderBy: { id: "asc" } });
    expect(audit.map((e) => e.action)).toEqual(["fleet.pause", "fleet.resume"]);
  });

  test("kill scope: every matching run denied at once, one barrier per tree in parallel, runs created during the stop refused, finished and killed runs not stopped again, the fleet receipt", async () => {
    const trees: FixtureRun[] = [];
    for (let i = 0; i < 6; i++) {
      const root = await makeTask("kz");
      const kid = await makeTask("kz", {}, root);
      await addOp(team.teamId, kid, { state: "queued" });
      trees.push(root, kid);
    }
    const finished = await makeTask("kz");
    await prisma().run.update({ where: { id: finished.runId }, data: { finishedAt: new Date() } });
    const alreadyKilled = await makeTask("kz");
    expect((await call("POST", `/api/v1/runs/${alreadyKilled.runId}/kill`, keys.operator, { reason: "earlier" })).status).toBe(202);
    const outside = await makeTask("keep");

    const r = await call("POST", "/api/v1/stops", keys.admin, { action: "kill", filter: { taskPrefix: "kz-" }, reason: "bad deploy wave" });
    expect(r.status).toBe(202);
    const stopId = r.json.stopId as string;
    expect(r.json).toMatchObject({ action: "kill", matched: 12, dispatchStopped: true, barriers: { total: 6 } });
    // dispatch stopped the moment the scope committed, for every matching run — before any barrier
    // (the background fan-out may already have killed a root: its child then answers parent_revoked)
    for (const run of trees) expect(["deny:killed", "deny:parent_revoked"]).toContain(await decisionOf(run));
    // a run created during the stop (under a tree, and a fresh root) is refused too, for good
    const lateRoot = await makeTask("kz");
    expect(await decisionOf(lateRoot)).toBe("deny:killed");
    expect(await decisionOf(outside)).toBe("allow:allowed");
    expect(await decisionOf(finished)).toBe("deny:killed");

    const done = await waitFor(
      "fleet receipt",
      async () => {
        const v = await call("GET", `/api/v1/stops/${stopId}`, keys.operator);
        return v.json.receipt ? StopView.parse(v.json) : null;
      },
      90_000,
      250,
    );
    expect(done.barriers).toMatchObject({ total: 6, started: 6, complete: 6, stopIncomplete: 0, failed: 0 });
    expect(done.receipt!.decision).toBe("stopped_and_quiet");
    const body = done.receipt!.body as {
      digest: string;
      runs: { runId: string; barrierId: string; decision: string; digest: string }[];
      matched: number;
    };
    const { digest, ...rest } = body;
    expect(digest).toBe(sha256Hex(canonicalJson(rest)));
    expect(digest).toBe(done.receipt!.digest);
    expect(body.runs).toHaveLength(6);
    // each run's entry is its barrier's own receipt
    for (const e of body.runs) {
      const rc = await call("GET", `/api/v1/barriers/${e.barrierId}/receipt`, keys.operator);
      expect(rc.json.digest).toBe(e.digest);
    }
    // the engine started each barrier on behalf of the admin who asked for the stop
    const requesters = await prisma().barrier.findMany({
      where: { id: { in: body.runs.map((e) => e.barrierId) } },
      select: { requestedBy: true },
    });
    expect(requesters).toHaveLength(6);
    for (const b of requesters) expect(b.requestedBy.startsWith(`user:${team.users.admin.id} via key:`)).toBe(true);
    // the finished and the already-killed runs got no new barrier
    const barriersOf = async (runId: string) => prisma().barrier.count({ where: { runId } });
    expect(await barriersOf(finished.runId)).toBe(0);
    expect(await barriersOf(alreadyKilled.runId)).toBe(1);
    // every tree is killed for good; a kill scope cannot be resumed
    for (const run of trees) expect((await prisma().run.findUniqueOrThrow({ where: { id: run.runId } })).lifecycle).toBe("killed");
    expect((await call("POST", `/api/v1/stops/${stopId}/resume`, keys.admin, { reason: "oops" })).status).toBe(409);
    expect(await decisionOf(lateRoot)).toBe("deny:killed");
    // audited: the scope, each barrier, the fleet receipt
    const actions = (
      await prisma().auditEvent.findMany({
        where: { teamId: team.teamId, OR: [{ target: stopId }, { action: "run.kill", target: { in: trees.map((t) => t.runId) } }] },
      })
    ).map((e) => e.action);
    expect(actions.filter((a) => a === "run.kill")).toHaveLength(6);
    expect(actions).toEqual(expect.arrayContaining(["fleet.kill", "fleet.receipt"]));
  }, 120_000);

  test("run completion: finish marks the run and its subtree finished (machine keys; idempotent); a kill scope starts no barrier for it", async () => {
    const root = await makeTask("fin");
    const kid = await makeTask("fin", {}, root);
    const live = await makeTask("fin");
    expect((await call("POST", `/api/v1/runs/${root.runId}/finish`, keys.viewer, {})).status).toBe(403);
    expect((await call("POST", `/api/v1/runs/${root.runId}/finish`, keys.otherAdmin, {})).status).toBe(404);
    // Same team is not the holder: without the run's lease the agent may not finish it.
    expect((await call("POST", `/api/v1/runs/${root.runId}/finish`, keys.agent, {})).status).toBe(403);
    expect((await prisma().run.findUniqueOrThrow({ where: { id: root.runId } })).finishedAt).toBeNull();
    const f = await call("POST", `/api/v1/runs/${root.runId}/finish`, keys.agent, { leaseId: root.leaseId });
    expect(f.status).toBe(200);
    expect(f.json).toMatchObject({ runId: root.runId, finished: 2, abandoned: 0 });
    expect((await call("POST", `/api/v1/runs/${root.runId}/finish`, keys.agent, { leaseId: root.leaseId })).json).toMatchObject({
      finished: 0,
      finishedAt: f.json.finishedAt,
    });
    expect((await prisma().run.findUniqueOrThrow({ where: { id: kid.runId } })).finishedAt).not.toBeNull();
    const dry = await call("POST", "/api/v1/stops", keys.operator, {
      action: "kill",
      filter: { taskPrefix: "fin-" },
      reason: "x",
      dryRun: true,
    });
    expect(dry.json).toMatchObject({ matched: 1, barrierTargets: 1, sample: [{ runId: live.runId, status: "active" }] });
    const byStatus = await call("POST", "/api/v1/stops", keys.operator, {
      action: "kill",
      filter: { taskPrefix: "fin-", status: ["finished"] },
      reason: "x",
      dryRun: true,
    });
    expect(byStatus.json).toMatchObject({ matched: 0 });
  });

  test("a fleet with one unknown outcome is stop_incomplete, and says how many reconciliations are open", async () => {
    const quiet = await makeTask("inc");
    const busy = await makeTask("inc");
    await addOp(team.teamId, quiet, { state: "queued" });
    await addOp(team.teamId, busy, { state: "running" }); // a plain call nobody can be asked about → unknown
    const r = await call("POST", "/api/v1/stops", keys.operator, { action: "kill", filter: { taskPrefix: "inc-" }, reason: "incident" });
    const done = await waitFor(
      "fleet receipt",
      async () => {
        const v = await call("GET", `/api/v1/stops/${r.json.stopId}`, keys.operator);
        return v.json.receipt ? StopView.parse(v.json) : null;
      },
      90_000,
      250,
    );
    expect(done.receipt!.decision).toBe("stop_incomplete");
    expect(done.barriers).toMatchObject({ total: 2, complete: 2, stopIncomplete: 1 });
    expect(done.openReconciliations).toBe(1);
  }, 120_000);
});
