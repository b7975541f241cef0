// The gate in batches (docs/gate.md#batches), against the real database: one quiesce_gate_batch call
// mixing every kind of call it must hand to quiesce_gate (unknown key, forbidden key, missing run, the
// same operationId twice, a replay) with the ones it decides itself (allow, hold, deny); and the
// process's batcher forming batches out of concurrent gateCheck calls. Agreement with decideGate on
// generated states, through batches, is in oracle.test.ts; batches racing kills and scopes in race.test.ts.
import { afterAll, expect, test } from "vitest";
import { prisma } from "../../lib/platform/db/prisma";
import { closePool } from "../../lib/platform/db/pool";
import { gateBatchStats, gateBatcher, gateCheck, gateCheckBatch, type GateInput } from "../../lib/modules/gate/statement";
import { makeKey, makeRun, makeTeam, opKey, type FixtureKey, type FixtureRun } from "../support/fixtures";

afterAll(async () => {
  await closePool();
  await prisma().$disconnect();
});

const call = (key: FixtureKey, run: FixtureRun, operationId = opKey(), over: Partial<GateInput> = {}): GateInput => ({
  keyHash: key.hash,
  runId: run.runId,
  leaseId: run.leaseId,
  epoch: run.epoch,
  operationId,
  tool: "deploy",
  ...over,
});

test("one batch answers every kind of call as quiesce_gate would, in input order", async () => {
  const team = await makeTeam("batch");
  const other = await makeTeam("batch-other");
  const key = await makeKey(team.teamId, { kind: "agent" });
  const narrow = await makeKey(team.teamId, { kind: "agent", scopes: ["runs.read"] });
  const unknown: FixtureKey = { ...key, hash: "0".repeat(64) };
  const healthy = await makeRun(team.teamId);
  const paused = await makeRun(team.teamId, { lifecycle: "paused" });
  const killed = await makeRun(team.teamId, { lifecycle: "killed" });
  const stale = await makeRun(team.teamId, { epoch: 3 });
  const foreign = await makeRun(other.teamId);
  const twice = opKey("twice");
  const replayed = opKey("replayed");
  expect(await gateCheck(call(key, healthy, replayed))).toMatchObject({ ok: true, decision: "allow" });

  const out = await gateCheckBatch([
    call(key, healthy),
    call(key, paused),
    call(key, killed),
    call(unknown, healthy),
    call(narrow, healthy),
    call(key, foreign),
    call(key, healthy, twice),
    call(key, healthy, twice),
    call(key, healthy, replayed),
    call(key, stale, opKey(), { epoch: 1 }),
  ]);
  expect(out.map((o) => (o.ok ? `${o.decision}:${o.reason}` : o.code))).toEqual([
    "allow:allowed",
    "hold:paused",
    "deny:killed",
    "unauthenticated",
    "forbidden",
    "deny:missing_state",
    "allow:allowed",
    // the second ask with the same operationId is a replay of the running operation
    "allow:allowed",
    "allow:allowed",
    "deny:stale_epoch",
  ]);
  expect(out[0]).toMatchObject({ currentEpoch: 1, operation: { state: "running" } });
  expect(out[1]).not.toHaveProperty("operation");
  expect(out[2]).toMatchObject({ operation: { state: "denied" } });

  // one operation for the twice-asked id; every decision that was made is recorded once
  expect(await prisma().operation.count({ where: { teamId: team.teamId, operationId: twice } })).toBe(1);
  const ops = await prisma().operation.findMany({
    where: { teamId: team.teamId, runId: { in: [paused.runId, killed.runId, stale.runId] } },
  });
  expect(
    ops
      .map((o) => `${o.runId === killed.runId ? "killed" : o.runId === stale.runId ? "stale" : "paused"}:${o.state}:${o.stateReason}`)
      .sort(),
  ).toEqual(["killed:denied:killed", "stale:denied:stale_epoch"]);
  // 1 before the batch + 8 in it (unknown and forbidden keys decide nothing); the other team's run is
  // recorded under the asking team without its id (the gate_decisions_scope trigger)
  const recorded = await prisma().gateDecision.findMany({ where: { teamId: team.teamId } });
  expect(recorded.length).toBe(9);
  expect(recorded.filter((r) => r.runId === "(another team's run)").map((r) => r.reason)).toEqual(["missing_state"]);
  expect(recorded.filter((r) => r.operationId === twice).map((r) => r.decision)).toEqual(["allow", "allow"]);
});

test("concurrent gateCheck calls on the default pool are decided in batches", async () => {
  const team = await makeTeam("batcher");
  const key = await makeKey(team.teamId, { kind: "agent" });
  const runs = await Promise.all(Array.from({ length: 4 }, () => makeRun(team.teamId)));
  const before = gateBatchStats();
  const out = await Promise.all(Array.from({ length: 24 }, (_, i) => gateCheck(call(key, runs[i % runs.length]!))));
  expect(out.every((o) => o.ok && o.decision === "allow")).toBe(true);
  const after = gateBatchStats();
  // the first calls (as many as may be in flight) go alone; the rest waited and went together
  expect(after.calls - before.calls).toBeGreaterThan(12);
  expect(after.batches - before.batches).toBeLessThan(after.calls - before.calls);
  expect(await prisma().operation.count({ where: { teamId: team.teamId, state: "running" } })).toBe(24);
  expect(await prisma().gateDecision.count({ where: { teamId: team.teamId, decision: "allow" } })).toBe(24);
});

test("callers that call again as soon as they are answered go together in the next batch, not one alone first", async () => {
  // 8 callers in a loop, one statement in flight. The answers of a batch wake its callers and their next
  // calls arrive in the microtasks that follow; the batcher frees the slot only on the next turn of the
  // event loop, so they all go in the next batch. (Freed at once, the first of them went alone and the
  // other 7 waited for a later slot: batches of 1, 7, 1, 7 … — docs/gate.md#batches.)
  const team = await makeTeam("batch-fill");
  const key = await makeKey(team.teamId, { kind: "agent" });
  const runs = await Promise.all(Array.from({ length: 8 }, () => makeRun(team.teamId)));
  const check = gateBatcher(1);
  const rounds = 10;
  const before = gateBatchStats();
  const out = await Promise.all(
    runs.map(async (run) => {
      const decisions: string[] = [];
      for (let i = 0; i < rounds; i++) {
        const o = await check(call(key, run));
        decisions.push(o.ok ? o.decision : o.code);
      }
      return decisions;
    }),
  );
  expect(out.flat()).toEqual(Array(8 * rounds).fill("allow"));
  const after = gateBatchStats();
  // Only the very first call goes alone (nothing was in flight); every later call went in a batch of 8.
  expect(after.calls - before.calls).toBe(8 * rounds - 1);
  expect(after.batches - before.batches).toBe(rounds);
});
