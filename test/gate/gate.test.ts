// The SQL gate against the real database: every reason code, the whole ancestor chain, replay rules,
// admit and heartbeat, and a same-operationId race. Pure-vs-SQL agreement on generated states is in
// oracle.test.ts; the multi-process pause/kill race is in race.test.ts.
import { afterAll, describe, expect, test } from "vitest";
import { prisma } from "../../lib/platform/db/prisma";
import { closePool } from "../../lib/platform/db/pool";
import { newId } from "../../lib/platform/ids";
import { admitCheck, gateCheck, heartbeatCheck, type GateOutcome } from "../../lib/modules/gate/statement";
import {
  makeChain,
  makeGateWorld,
  makeKey,
  makeOperation,
  makeRun,
  makeTeam,
  opKey,
  type FixtureKey,
  type FixtureRun,
} from "../support/fixtures";

afterAll(async () => {
  await closePool();
  await prisma().$disconnect();
});

const HOUR = 3600_000;
const ago = (ms: number) => new Date(Date.now() - ms);
const ahead = (ms: number) => new Date(Date.now() + ms);

function ask(key: FixtureKey, run: FixtureRun, over: Partial<{ epoch: number; operationId: string; leaseId: string; runId: string }> = {}) {
  return gateCheck({
    keyHash: key.hash,
    runId: over.runId ?? run.runId,
    leaseId: over.leaseId ?? run.leaseId,
    epoch: over.epoch ?? run.epoch,
    operationId: over.operationId ?? opKey(),
    tool: "deploy",
  });
}

function expectDecision(o: GateOutcome, decision: string, reason: string) {
  expect(o.ok).toBe(true);
  if (!o.ok) return;
  expect({ decision: o.decision, reason: o.reason }).toEqual({ decision, reason });
}

async function opRow(teamId: string, operationId: string) {
  return prisma().operation.findUnique({ where: { teamId_operationId: { teamId, operationId } } });
}

async function decisions(runId: string) {
  return prisma().gateDecision.findMany({ where: { runId }, orderBy: { id: "asc" } });
}

describe("reason codes", () => {
  test("allow: a normal run with a live lease; the operation becomes running and the decision is recorded", async () => {
    const { key, leaf, team } = await makeGateWorld(1);
    const operationId = opKey();
    const o = await ask(key, leaf, { operationId });
    expectDecision(o, "allow", "allowed");
    if (o.ok) expect(o.currentEpoch).toBe(1);
    const op = await opRow(team.teamId, operationId);
    expect(op).toMatchObject({ state: "running", runId: leaf.runId, leaseId: leaf.leaseId, epochStamp: 1, kind: "call", tool: "deploy" });
    expect(op!.startedAt).not.toBeNull();
    const d = await decisions(leaf.runId);
    expect(d).toHaveLength(1);
    expect(d[0]).toMatchObject({
      decision: "allow",
      reason: "allowed",
      source: "gate",
      epochSeen: 1,
      currentEpoch: 1,
      operationId,
      teamId: team.teamId,
    });
  });

  test("missing_state: a run that does not exist, recorded, and no operation created", async () => {
    const { key, leaf, team } = await makeGateWorld(1);
    const operationId = opKey();
    const ghost = newId("run");
    const o = await ask(key, leaf, { runId: ghost, operationId });
    expectDecision(o, "deny", "missing_state");
    if (o.ok) expect(o.currentEpoch).toBeNull();
    expect(await opRow(team.teamId, operationId)).toBeNull();
    expect(await decisions(ghost)).toMatchObject([{ decision: "deny", reason: "missing_state" }]);
  });

  test("missing_state: another team's run answers exactly like a missing one", async () => {
    const mine = await makeGateWorld(1);
    const theirs = await makeGateWorld(1);
    const a = await ask(mine.key, theirs.leaf);
    const b = await ask(mine.key, mine.leaf, { runId: newId("run") });
    expect(a).toEqual(b);
    expectDecision(a, "deny", "missing_state");
    expect(await prisma().operation.count({ where: { runId: theirs.leaf.runId } })).toBe(0);
  });

  test("missing_state: an unknown lease, or a lease held by another run", async () => {
    const { key, chain } = await makeGateWorld(2);
    expectDecision(await ask(key, chain[1]!, { leaseId: newId("lease") }), "deny", "missing_state");
    expectDecision(await ask(key, chain[1]!, { leaseId: chain[0]!.leaseId }), "deny", "missing_state");
  });

  test("missing_state: an ancestor named in the path is unreadable", async () => {
    const { team, key, chain } = await makeGateWorld(2);
    await prisma().run.update({ where: { id: chain[1]!.runId }, data: { path: [newId("run"), chain[1]!.runId] } });
    const operationId = opKey();
    expectDecision(await ask(key, chain[1]!, { operationId }), "deny", "missing_state");
    // unreadable state writes no operation, so asking again cannot turn into an allow
    expect(await opRow(team.teamId, operationId)).toBeNull();
    expectDecision(await ask(key, chain[1]!, { operationId }), "deny", "missing_state");
  });

  test("killed on the run itself; parent_revoked for the grandchild of a killed grandparent", async () => {
    const team = await makeTeam();
    const key = await makeKey(team.teamId);
    const [gp, p, gc] = await makeChain(team.teamId, [{ lifecycle: "killed" }, {}, {}]);
    expectDecision(await ask(key, gp!), "deny", "killed");
    expectDecision(await ask(key, p!), "deny", "parent_revoked");
    const operationId = opKey();
    expectDecision(await ask(key, gc!, { operationId }), "deny", "parent_revoked");
    // a deny is recorded on the operation, and stays deny
    expect(await opRow(team.teamId, operationId)).toMatchObject({ state: "denied", stateReason: "parent_revoked" });
  });

  test("a whole-tree kill: root answers killed, every descendant parent_revoked", async () => {
    const team = await makeTeam();
    const key = await makeKey(team.teamId);
    const chain = await makeChain(team.teamId, [{ lifecycle: "killed" }, { lifecycle: "killed" }, { lifecycle: "killed" }]);
    expectDecision(await ask(key, chain[0]!), "deny", "killed");
    expectDecision(await ask(key, chain[2]!), "deny", "parent_revoked");
  });

  test("lease_revoked on the run's own lease; parent_revoked when an ancestor lease is revoked", async () => {
    const team = await makeTeam();
    const key = await makeKey(team.teamId);
    const own = await makeChain(team.teamId, [{}, { lease: { revokedAt: ago(1000) } }]);
    expectDecision(await ask(key, own[1]!), "deny", "lease_revoked");
    const anc = await makeChain(team.teamId, [{ lease: { revokedAt: ago(1000) } }, {}, {}]);
    expectDecision(await ask(key, anc[2]!), "deny", "parent_revoked");
  });

  test("lease_expired on its own lease or an ancestor's", async () => {
    const team = await makeTeam();
    const key = await makeKey(team.teamId);
    const own = await makeChain(team.teamId, [{}, { lease: { validUntil: ago(1) } }]);
    expectDecision(await ask(key, own[1]!), "deny", "lease_expired");
    const anc = await makeChain(team.teamId, [{ lease: { validUntil: ago(60_000) } }, { lease: { validUntil: ahead(HOUR) } }]);
    expectDecision(await ask(key, anc[1]!), "deny", "lease_expired");
  });

  test("stale_epoch: a stamp below the run's epoch or below any ancestor's", async () => {
    const team = await makeTeam();
    const key = await makeKey(team.teamId);
    const chain = await makeChain(team.teamId, [{ epoch: 4 }, { epoch: 2 }]);
    const o = await ask(key, chain[1]!, { epoch: 3 });
    expectDecision(o, "deny", "stale_epoch");
    if (o.ok) expect(o.currentEpoch).toBe(4);
    expectDecision(await ask(key, chain[1]!, { epoch: 4 }), "allow", "allowed");
  });

  test("operation_expired: registered work past its expiresAt is denied at admission", async () => {
    const { team, key, leaf } = await makeGateWorld(1, "worker");
    const { operationId } = await makeOperation(leaf, { state: "queued", expiresAt: ago(1000) });
    const o = await admitCheck({ keyHash: key.hash, operationId });
    expectDecision(o as GateOutcome, "deny", "operation_expired");
    expect(await opRow(team.teamId, operationId)).toMatchObject({ state: "denied", stateReason: "operation_expired" });
  });

  test("breaker_open on the run or an ancestor inside the cool-down", async () => {
    const team = await makeTeam();
    const key = await makeKey(team.teamId);
    const own = await makeRun(team.teamId, { breaker: "open", breakerChangedAt: ago(1000) });
    expectDecision(await ask(key, own), "deny", "breaker_open");
    const anc = await makeChain(team.teamId, [{ breaker: "open", breakerChangedAt: ago(1000) }, {}]);
    expectDecision(await ask(key, anc[1]!), "deny", "breaker_open");
  });

  test("half_open admits exactly one probe; the probe's own replay still passes", async () => {
    const team = await makeTeam();
    const key = await makeKey(team.teamId);
    const run = await makeRun(team.teamId, { breaker: "open", breakerChangedAt: ago(40_000) });
    const probe = opKey("probe");
    expectDecision(await ask(key, run, { operationId: probe }), "allow", "allowed");
    const row = await prisma().run.findUniqueOrThrow({ where: { id: run.runId } });
    expect(row).toMatchObject({ breaker: "half_open", breakerProbeOpId: probe, lifecycle: "normal" });
    expectDecision(await ask(key, run), "deny", "breaker_open");
    expectDecision(await ask(key, run, { operationId: probe }), "allow", "allowed");
  });

  test("half_open probe race: of 8 concurrent fresh calls exactly one is admitted", async () => {
    const team = await makeTeam();
    const key = await makeKey(team.teamId);
    const run = await makeRun(team.teamId, { breaker: "half_open", breakerChangedAt: ago(1000), breakerProbeOpId: null });
    const outs = await Promise.all(Array.from({ length: 8 }, () => ask(key, run)));
    const allowed = outs.filter((o) => o.ok && o.decision === "allow");
    expect(allowed).toHaveLength(1);
    expect(outs.filter((o) => o.ok && o.decision === "deny" && o.reason === "breaker_open")).toHaveLength(7);
    expect(await prisma().operation.count({ where: { runId: run.runId, state: "running" } })).toBe(1);
  });

  test("hold paused on the run or an ancestor; a hold records no operation", async () => {
    const team = await makeTeam();
    const key = await makeKey(team.teamId);
    const [gp, , gc] = await makeChain(team.teamId, [{ lifecycle: "paused" }, {}, {}]);
    const operationId = opKey();
    expectDecision(await ask(key, gc!, { operationId }), "hold", "paused");
    expect(await opRow(team.teamId, operationId)).toBeNull();
    expect(await decisions(gc!.runId)).toMatchObject([{ decision: "hold", reason: "paused" }]);
    // resume: the same operationId is decided afresh against current state
    await prisma().run.update({ where: { id: gp!.runId }, data: { lifecycle: "normal" } });
    expectDecision(await ask(key, gc!, { operationId }), "allow", "allowed");
  });

  test("first match wins: killed beats revoked, expired, stale, breaker and paused", async () => {
    const team = await makeTeam();
    const key = await makeKey(team.teamId);
    const run = await makeRun(team.teamId, {
      lifecycle: "killed",
      breaker: "open",
      epoch: 5,
      lease: { revokedAt: ago(1), validUntil: ago(1) },
    });
    expectDecision(await ask(key, run, { epoch: 1 }), "deny", "killed");
    const run2 = await makeRun(team.teamId, {
      lifecycle: "paused",
      breaker: "open",
      breakerChangedAt: ago(1),
      epoch: 5,
      lease: { validUntil: ago(1) },
    });
    expectDecision(await ask(key, run2, { epoch: 1 }), "deny", "lease_expired");
    const run3 = await makeRun(team.teamId, { lifecycle: "paused", breaker: "open", breakerChangedAt: ago(1) });
    expectDecision(await ask(key, run3), "deny", "breaker_open");
  });
});

describe("replay of an operationId", () => {
  test("finished → deny already_applied with the recorded outcome and effect receipt", async () => {
    const { team, key, leaf } = await makeGateWorld(1);
    const { id, operationId } = await makeOperation(leaf, { state: "succeeded", outcomeDetail: { deployed: "v2" } });
    await prisma().effectReceipt.create({
      data: {
        id: newId("eff"),
        teamId: team.teamId,
        operationId: id,
        providerOperationId: "prov-42",
        detail: { url: "x" },
        committedAt: new Date(),
        rollbackOwner: "sre",
        source: "executor",
      },
    });
    const o = await ask(key, leaf, { operationId });
    expectDecision(o, "deny", "already_applied");
    if (!o.ok) return;
    expect(o.operation).toMatchObject({
      operationId,
      state: "succeeded",
      outcomeDetail: { deployed: "v2" },
      effectReceipt: { providerOperationId: "prov-42", detail: { url: "x" }, rollbackOwner: "sre" },
    });
  });

  test("running → the recorded allow while authority allows; the current deny after a kill; hold while paused", async () => {
    const { team, key, leaf } = await makeGateWorld(1);
    const operationId = opKey();
    expectDecision(await ask(key, leaf, { operationId }), "allow", "allowed");
    expectDecision(await ask(key, leaf, { operationId }), "allow", "allowed");
    await prisma().run.update({ where: { id: leaf.runId }, data: { lifecycle: "paused" } });
    expectDecision(await ask(key, leaf, { operationId }), "hold", "paused");
    await prisma().run.update({ where: { id: leaf.runId }, data: { lifecycle: "killed", epoch: 2 } });
    expectDecision(await ask(key, leaf, { operationId }), "deny", "killed");
    // the running operation is not rewritten by a replay (the barrier settles it)
    expect(await prisma().operation.count({ where: { teamId: team.teamId, operationId } })).toBe(1);
    expect(await opRow(team.teamId, operationId)).toMatchObject({ state: "running" });
  });

  test("a recorded deny stays deny even when authority would now allow", async () => {
    const team = await makeTeam();
    const key = await makeKey(team.teamId);
    const run = await makeRun(team.teamId, { epoch: 3 });
    const operationId = opKey();
    expectDecision(await ask(key, run, { operationId, epoch: 1 }), "deny", "stale_epoch");
    expectDecision(await ask(key, run, { operationId, epoch: 3 }), "deny", "stale_epoch");
    expectDecision(await ask(key, run, { epoch: 3 }), "allow", "allowed");
  });

  test("an operationId recorded under another run is not replayed for this one", async () => {
    const { key, chain } = await makeGateWorld(2);
    const operationId = opKey();
    expectDecision(await ask(key, chain[0]!, { operationId }), "allow", "allowed");
    expectDecision(await ask(key, chain[1]!, { operationId }), "deny", "missing_state");
  });

  test("20 concurrent calls with one operationId create exactly one running operation", async () => {
    const { team, key, leaf } = await makeGateWorld(2);
    const operationId = opKey("same");
    const outs = await Promise.all(Array.from({ length: 20 }, () => ask(key, leaf, { operationId })));
    for (const o of outs) expectDecision(o, "allow", "allowed");
    const rows = await prisma().operation.findMany({ where: { teamId: team.teamId, operationId } });
    expect(rows).toHaveLength(1);
    expect(rows[0]!.state).toBe("running");
    expect(await prisma().gateDecision.count({ where: { runId: leaf.runId, operationId } })).toBe(20);
  });

  test("20 concurrent admits of one queued operation start it once", async () => {
    const { team, key, leaf } = await makeGateWorld(1, "worker");
    const { operationId } = await makeOperation(leaf, { state: "queued" });
    const outs = await Promise.all(Array.from({ length: 20 }, () => admitCheck({ keyHash: key.hash, operationId })));
    for (const o of outs) expectDecision(o as GateOutcome, "allow", "allowed");
    expect(await opRow(team.teamId, operationId)).toMatchObject({ state: "running" });
  });
});

describe("admit and heartbeat", () => {
  test("admit moves queued/scheduled work (kinds queued, scheduled, retry) to running on allow and to denied on deny; a hold changes nothing", async () => {
    const team = await makeTeam();
    const key = await makeKey(team.teamId, { kind: "worker" });
    const run = await makeRun(team.teamId);
    for (const [state, kind] of [
      ["queued", "queued"],
      ["scheduled", "scheduled"],
      ["scheduled", "retry"],
    ] as const) {
      const { operationId } = await makeOperation(run, { state, kind });
      // The worker presents the lease its producer passed in the job's stamp.
      expectDecision((await admitCheck({ keyHash: key.hash, operationId, leaseId: run.leaseId })) as GateOutcome, "allow", "allowed");
      expect(await opRow(team.teamId, operationId)).toMatchObject({ state: "running" });
    }
    const paused = await makeRun(team.teamId, { lifecycle: "paused" });
    const held = await makeOperation(paused, { state: "queued" });
    expectDecision(
      (await admitCheck({ keyHash: key.hash, operationId: held.operationId, leaseId: paused.leaseId })) as GateOutcome,
      "hold",
      "paused",
    );
    expect(await opRow(team.teamId, held.operationId)).toMatchObject({ state: "queued" });
    const killed = await makeRun(team.teamId, { lifecycle: "killed" });
    const dead = await makeOperation(killed, { state: "queued" });
    expectDecision(
      (await admitCheck({ keyHash: key.hash, operationId: dead.operationId, leaseId: killed.leaseId })) as GateOutcome,
      "deny",
      "killed",
    );
    expect(await opRow(team.teamId, dead.operationId)).toMatchObject({ state: "denied", stateReason: "killed" });
    const d = await decisions(killed.runId);
    expect(d).toMatchObject([{ source: "admit", decision: "deny", reason: "killed" }]);
  });

  test("admit uses the epoch stamped at registration", async () => {
    const team = await makeTeam();
    const key = await makeKey(team.teamId, { kind: "worker" });
    const run = await makeRun(team.teamId, { epoch: 2 });
    const { operationId } = await makeOperation(run, { state: "queued", epochStamp: 1 });
    expectDecision((await admitCheck({ keyHash: key.hash, operationId, leaseId: run.leaseId })) as GateOutcome, "deny", "stale_epoch");
  });

  test("admit of an unknown operation, or another team's, is not_found", async () => {
    const mine = await makeGateWorld(1, "worker");
    const theirs = await makeGateWorld(1, "worker");
    const { operationId } = await makeOperation(theirs.leaf, { state: "queued" });
    expect(await admitCheck({ keyHash: mine.key.hash, operationId })).toMatchObject({ ok: false, code: "not_found" });
    expect(await admitCheck({ keyHash: mine.key.hash, operationId: "nope" })).toMatchObject({ ok: false, code: "not_found" });
    expect(await heartbeatCheck({ keyHash: mine.key.hash, operationId })).toMatchObject({ ok: false, code: "not_found" });
  });

  test("heartbeat continues while allowed or paused, stops when killed, and stamps both heartbeat columns", async () => {
    const { team, key, leaf } = await makeGateWorld(1);
    const operationId = opKey();
    expectDecision(await ask(key, leaf, { operationId }), "allow", "allowed");
    expect(await heartbeatCheck({ keyHash: key.hash, operationId })).toEqual({
      ok: true,
      continue: true,
      reason: "allowed",
      currentEpoch: 1,
    });
    const op = await opRow(team.teamId, operationId);
    const run = await prisma().run.findUniqueOrThrow({ where: { id: leaf.runId } });
    expect(op!.lastHeartbeatAt).not.toBeNull();
    expect(run.lastHeartbeatAt).not.toBeNull();
    await prisma().run.update({ where: { id: leaf.runId }, data: { lifecycle: "paused" } });
    expect(await heartbeatCheck({ keyHash: key.hash, operationId })).toMatchObject({ ok: true, continue: true, reason: "paused" });
    await prisma().run.update({ where: { id: leaf.runId }, data: { lifecycle: "killed", epoch: 2 } });
    expect(await heartbeatCheck({ keyHash: key.hash, operationId })).toEqual({
      ok: true,
      continue: false,
      reason: "killed",
      currentEpoch: 2,
    });
    expect((await decisions(leaf.runId)).map((d) => d.source)).toEqual(["gate", "heartbeat", "heartbeat", "heartbeat"]);
  });

  test("heartbeat of a finished operation stops with already_applied", async () => {
    const { key, leaf } = await makeGateWorld(1);
    const { operationId } = await makeOperation(leaf, { state: "succeeded" });
    expect(await heartbeatCheck({ keyHash: key.hash, operationId })).toMatchObject({
      ok: true,
      continue: false,
      reason: "already_applied",
    });
  });
});

describe("keys", () => {
  test("unknown, revoked and expired keys are unauthenticated and decide nothing", async () => {
    const { team, leaf } = await makeGateWorld(1);
    const revoked = await makeKey(team.teamId, { revokedAt: ago(1) });
    const expired = await makeKey(team.teamId, { expiresAt: ago(1) });
    const unknown = { ...revoked, hash: "0".repeat(64) };
    for (const k of [revoked, expired, unknown]) {
      expect(await ask(k, leaf)).toMatchObject({ ok: false, code: "unauthenticated" });
    }
    expect(await decisions(leaf.runId)).toHaveLength(0);
    expect(await prisma().operation.count({ where: { runId: leaf.runId } })).toBe(0);
  });

  test("agent, worker and gateway keys may ask; a not-yet-expired key too", async () => {
    const { team, leaf } = await makeGateWorld(1);
    for (const kind of ["agent", "worker", "gateway"] as const) {
      const k = await makeKey(team.teamId, { kind, expiresAt: ahead(HOUR) });
      expectDecision(await ask(k, leaf), "allow", "allowed");
    }
  });

  test("a key scoped away from gate.ask is forbidden", async () => {
    const { team, leaf } = await makeGateWorld(1);
    const k = await makeKey(team.teamId, { kind: "agent", scopes: ["run.read"] });
    expect(await ask(k, leaf)).toMatchObject({ ok: false, code: "forbidden" });
    const k2 = await makeKey(team.teamId, { kind: "agent", scopes: ["run.read", "gate.ask"] });
    expectDecision(await ask(k2, leaf), "allow", "allowed");
  });
});
