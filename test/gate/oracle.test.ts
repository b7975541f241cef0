// ORACLE: random control states (tree depth 1–4, lifecycle / breaker / epoch / lease revocation and
// expiry / existing operation states) are written to the real database; the SQL gate (quiesce_gate)
// must answer exactly what the pure lib/control decideGate answers on the same facts — decision, reason,
// current epoch, the operation's resulting state and the breaker probe claims. Each case is then asked
// a second time (a replay, facts re-read from the database) and compared again. Cases also carry stop
// scopes (docs/fleet-stop.md) whose filters are confined to the case by a case-unique task prefix, so the
// scopes of earlier cases in the shared team never match a later one.
import { afterAll, beforeAll, expect, test } from "vitest";
import fc from "fast-check";
import { prisma } from "../../lib/platform/db/prisma";
import type { Prisma } from "../../lib/generated/prisma/client";
import { closePool } from "../../lib/platform/db/pool";
import { newId } from "../../lib/platform/ids";
import { admitCheck, gateCheck, gateCheckBatch, heartbeatCheck, type GateInput, type GateOutcome } from "../../lib/modules/gate/statement";
import { decideGate, type GateFacts, type GateMode, type LeaseFacts, type OperationFacts, type RunFacts } from "../../lib/control/gate";
import { STOP_ACTIONS, RUN_STATUSES, type ScopeFacts, type ScopeRunFacts, type StopFilter } from "../../lib/control/fleet";
import {
  BREAKER_STATES,
  HARNESSES,
  LIFECYCLES,
  OPERATION_STATES,
  type BreakerState,
  type Lifecycle,
  type OperationState,
} from "../../lib/control/types";
import { makeKey, makeRun, makeTeam, opKey, type FixtureKey, type FixtureRun, type FixtureTeam } from "../support/fixtures";

afterAll(async () => {
  await closePool();
  await prisma().$disconnect();
});

// Every case writes fresh runs and operation ids, so the teams and keys can be shared.
let team: FixtureTeam, other: FixtureTeam, agentKey: FixtureKey, workerKey: FixtureKey, filler: FixtureRun;
beforeAll(async () => {
  team = await makeTeam("oracle");
  other = await makeTeam("oracle-other");
  agentKey = await makeKey(team.teamId, { kind: "agent" });
  workerKey = await makeKey(team.teamId, { kind: "worker" });
  filler = await makeRun(team.teamId);
});

/**
 * Every other gate-mode case is asked through quiesce_gate_batch (docs/gate.md#batches): the case's call
 * between two calls of a healthy run of another tree, in one batch. The fillers must be allowed; the
 * case's answer must be decideGate's, whichever path (set-based, or quiesce_gate inside the batch)
 * decided it.
 */
let asked = 0;
async function askGate(i: GateInput): Promise<GateOutcome> {
  if (asked++ % 2 === 0) return gateCheck(i);
  const fill = (): GateInput => ({
    keyHash: agentKey.hash,
    runId: filler.runId,
    leaseId: filler.leaseId,
    epoch: filler.epoch,
    operationId: opKey("filler"),
    tool: "t",
  });
  const [a, got, b] = await gateCheckBatch([fill(), i, fill()]);
  expect(a).toMatchObject({ ok: true, decision: "allow" });
  expect(b).toMatchObject({ ok: true, decision: "allow" });
  return got!;
}

const S = 1000;
// Offsets are far from every threshold (30 s cool-down, 60 s probe timeout) so the seconds between
// writing a case and asking do not change its answer.
const nodeArb = fc.record({
  lifecycle: fc.constantFrom<Lifecycle>(...LIFECYCLES, "normal", "normal", "normal", "normal"),
  breaker: fc.constantFrom<BreakerState>(...BREAKER_STATES, "closed", "closed"),
  breakerAgo: fc.constantFrom(5 * S, 40 * S, 120 * S),
  probe: fc.constantFrom<"none" | "this" | "other">("none", "this", "other"),
  // An operator's trip (held open until reset): meaningful only for an open breaker.
  held: fc.constantFrom(false, false, true),
  epoch: fc.integer({ min: 1, max: 3 }),
  leaseRevoked: fc.constantFrom(false, false, false, false, true),
  leaseExpired: fc.constantFrom(false, false, false, false, true),
  harness: fc.constantFrom(...HARNESSES),
  agent: fc.constantFrom(null, "agent-a", "agent-b"),
  finished: fc.constantFrom(false, false, true),
  createdAgo: fc.constantFrom(3600 * 1000, 60 * 1000),
});
// A stop scope: always confined to the case (task prefix), plus at most one more narrowing member.
const scopeArb = fc.record({
  action: fc.constantFrom(...STOP_ACTIONS),
  lifted: fc.constantFrom(false, false, false, true),
  also: fc.oneof(
    { arbitrary: fc.constant<{ k: "none" }>({ k: "none" }), weight: 4 },
    fc.record({ k: fc.constant<"harness">("harness"), v: fc.subarray([...HARNESSES], { minLength: 1 }) }),
    fc.record({ k: fc.constant<"agent">("agent"), v: fc.subarray(["agent-a", "agent-b", "someone"], { minLength: 1 }) }),
    fc.record({ k: fc.constant<"status">("status"), v: fc.subarray([...RUN_STATUSES], { minLength: 1 }) }),
    fc.record({ k: fc.constant<"node">("node"), v: fc.integer({ min: 0, max: 3 }) }),
    fc.record({ k: fc.constant<"after">("after"), v: fc.constant(30 * 60 * 1000) }),
    fc.record({ k: fc.constant<"before">("before"), v: fc.constant(30 * 60 * 1000) }),
    fc.record({ k: fc.constant<"otherPrefix">("otherPrefix") }),
  ),
});
const caseArb = fc.record({
  nodes: fc.array(nodeArb, { minLength: 1, maxLength: 4 }),
  target: fc.constantFrom("leaf", "leaf", "leaf", "leaf", "root", "missing", "other-team"),
  lease: fc.constantFrom("own", "own", "own", "own", "parent", "missing"),
  // usually the current epoch (as a well-behaved caller stamps), sometimes anything
  epoch: fc.oneof(fc.constant<"current">("current"), fc.constant<"current">("current"), fc.integer({ min: 0, max: 4 })),
  mode: fc.constantFrom<GateMode>("gate", "gate", "admit", "heartbeat"),
  op: fc.option(
    fc.record({
      state: fc.constantFrom<OperationState>(...OPERATION_STATES, "queued", "scheduled", "running"),
      stateReason: fc.constantFrom(null, "killed", "stale_epoch", "nonsense"),
      expired: fc.boolean(),
      onTarget: fc.constantFrom(true, true, true, true, true, false),
    }),
    { nil: null, freq: 2 },
  ),
  // half the cases carry one or two scopes
  scopes: fc.oneof(fc.constant([]), fc.array(scopeArb, { minLength: 1, maxLength: 2 })),
});

type Case = typeof caseArb extends fc.Arbitrary<infer T> ? T : never;

/** A healthy one-run case whose call a live, unlifted scope with `action` covers. */
function scopedExample(action: (typeof STOP_ACTIONS)[number]): Case {
  return {
    nodes: [
      {
        lifecycle: "normal",
        breaker: "closed",
        breakerAgo: 120 * S,
        probe: "none",
        held: false,
        epoch: 1,
        leaseRevoked: false,
        leaseExpired: false,
        harness: HARNESSES[0],
        agent: null,
        finished: false,
        createdAgo: 60 * 1000,
      },
    ],
    target: "leaf",
    lease: "own",
    epoch: "current",
    mode: "gate",
    op: null,
    scopes: [{ action, lifted: false, also: { k: "none" } }],
  };
}

test("quiesce_gate agrees with decideGate on generated states", async () => {
  let compared = 0;
  const seen = new Set<string>();
  const reasons = new Set<string>();
  const scoped = new Set<string>();
  await fc.assert(
    fc.asyncProperty(caseArb, async (c: Case) => {
      const now = Date.now();
      const key = c.mode === "admit" ? workerKey : agentKey;
      const operationId = opKey("oracle");
      const runs: FixtureRun[] = [];
      const facts: RunFacts[] = [];
      const leases: LeaseFacts[] = [];
      const teamId = c.target === "other-team" ? other.teamId : team.teamId;
      const runRows: Prisma.RunCreateManyInput[] = [];
      const scopeRuns: ScopeRunFacts[] = [];
      const taskId = `oracle-${newId("run")}-`;
      const leaseRows: Prisma.LeaseCreateManyInput[] = [];
      for (const n of c.nodes) {
        const parent = runs[runs.length - 1];
        const runId = newId("run"),
          leaseId = newId("lease");
        const path = [...(parent?.path ?? []), runId],
          leasePath = [...(parent?.leasePath ?? []), leaseId];
        const changedAt = now - n.breakerAgo;
        const probe = n.breaker === "half_open" && n.probe !== "none" ? (n.probe === "this" ? operationId : "someone-else") : null;
        const validUntil = n.leaseExpired ? now - 60 * S : now + 3600 * S;
        const revokedAt = n.leaseRevoked ? now - S : null;
        runRows.push({
          id: runId,
          teamId,
          taskId,
          harness: n.harness,
          nativeAgentId: n.agent,
          createdAt: new Date(now - n.createdAgo),
          finishedAt: n.finished ? new Date(now - 1000) : null,
          parentRunId: parent?.runId ?? null,
          rootRunId: parent?.rootRunId ?? runId,
          path,
          depth: path.length - 1,
          lifecycle: n.lifecycle,
          breaker: n.breaker,
          breakerChangedAt: new Date(changedAt),
          breakerProbeOpId: probe,
          epoch: n.epoch,
          breakerHeld: n.held && n.breaker === "open",
        });
        leaseRows.push({
          id: leaseId,
          teamId,
          runId,
          parentLeaseId: parent?.leaseId ?? null,
          path: leasePath,
          scopes: ["*"],
          validUntil: new Date(validUntil),
          revokedAt: revokedAt === null ? null : new Date(revokedAt),
        });
        runs.push({
          runId,
          leaseId,
          teamId,
          rootRunId: parent?.rootRunId ?? runId,
          parentRunId: parent?.runId ?? null,
          path,
          leasePath,
          depth: path.length - 1,
          epoch: n.epoch,
        });
        facts.push({
          runId,
          lifecycle: n.lifecycle,
          breaker: n.breaker,
          breakerChangedAt: changedAt,
          breakerProbeOpId: probe,
          breakerHeld: n.held && n.breaker === "open",
          epoch: n.epoch,
          finishedAt: n.finished ? now - 1000 : null,
        });
        leases.push({ leaseId, runId, validUntil, revokedAt });
        scopeRuns.push({
          runId,
          harness: n.harness,
          nativeAgentId: n.agent,
          createdBy: null,
          taskId,
          createdAt: now - n.createdAgo,
          lifecycle: n.lifecycle,
          finishedAt: n.finished ? now - 1000 : null,
        });
      }
      // the case's stop scopes (lifted ones must be ignored by both sides)
      const liveScopes: ScopeFacts[] = [];
      for (const sc of c.scopes) {
        const filter: StopFilter = { taskPrefix: sc.also.k === "otherPrefix" ? `${taskId}x` : taskId };
        if (sc.also.k === "harness") filter.harness = sc.also.v;
        if (sc.also.k === "agent") filter.agent = sc.also.v;
        if (sc.also.k === "status") filter.status = sc.also.v;
        if (sc.also.k === "node") filter.runIds = [runRows[Math.min(sc.also.v, runRows.length - 1)]!.id];
        if (sc.also.k === "after") filter.createdAfter = now - sc.also.v;
        if (sc.also.k === "before") filter.createdBefore = now - sc.also.v;
        await prisma().stopScope.create({
          data: {
            id: newId("scope"),
            teamId,
            action: sc.action,
            filter: {},
            reason: "oracle",
            requestedBy: "oracle",
            fTaskPrefix: filter.taskPrefix,
            fHarness: filter.harness ? [...filter.harness] : undefined,
            fAgent: filter.agent ? [...filter.agent] : undefined,
            fStatus: filter.status ? [...filter.status] : undefined,
            fRunIds: filter.runIds ? [...filter.runIds] : undefined,
            fCreatedAfter: filter.createdAfter === undefined ? undefined : new Date(filter.createdAfter),
            fCreatedBefore: filter.createdBefore === undefined ? undefined : new Date(filter.createdBefore),
            liftedAt: sc.lifted ? new Date(now) : undefined,
          },
        });
        if (!sc.lifted) liveScopes.push({ action: sc.action, filter });
      }
      await prisma().run.createMany({ data: runRows });
      await prisma().lease.createMany({ data: leaseRows });
      const depth = runs.length;
      const epoch = c.epoch === "current" ? Math.max(...c.nodes.map((n) => n.epoch)) : c.epoch;
      const targetIdx = c.target === "root" ? 0 : depth - 1;
      const runId = c.target === "missing" ? newId("run") : runs[targetIdx]!.runId;
      const leaseIdx = c.lease === "parent" && targetIdx > 0 ? targetIdx - 1 : targetIdx;
      const leaseId = c.lease === "missing" ? newId("lease") : runs[leaseIdx]!.leaseId;

      // the existing operation (admit / heartbeat need one in this team)
      let op: OperationFacts | null = null;
      if (c.op && c.target !== "missing" && c.target !== "other-team") {
        const opRun = c.op.onTarget ? runs[targetIdx]! : runs[0]!;
        const expiresAt = c.op.expired ? now - 10 * S : now + 3600 * S;
        await prisma().operation.create({
          data: {
            id: newId("op"),
            teamId: team.teamId,
            operationId,
            runId: opRun.runId,
            leaseId,
            epochStamp: epoch,
            kind: c.op.state === "scheduled" ? "retry" : c.op.state === "queued" ? "queued" : "call",
            tool: "t",
            state: c.op.state,
            stateReason: c.op.stateReason,
            expiresAt: new Date(expiresAt),
          },
        });
        op = { operationId, runId: opRun.runId, state: c.op.state, stateReason: c.op.stateReason, expiresAt };
      }
      const mode: GateMode = op ? c.mode : "gate";
      const reqRunId = mode === "gate" ? runId : op!.runId;
      const reqRunIdx = runs.findIndex((r) => r.runId === reqRunId);
      const chain = c.target === "other-team" || reqRunIdx < 0 ? null : facts.slice(0, reqRunIdx + 1);
      const leaseChain = c.lease === "missing" || c.target === "other-team" ? null : leases.slice(0, leaseIdx + 1);

      const f: GateFacts = {
        now: Date.now(),
        mode,
        request: { runId: reqRunId, leaseId, epoch, operationId },
        chain,
        leaseChain,
        operation: op,
        scopes: liveScopes,
        scopeChain: chain ? scopeRuns.slice(0, reqRunIdx + 1) : [],
      };
      const expected = decideGate(f);
      const got =
        mode === "gate"
          ? await askGate({ keyHash: key.hash, runId, leaseId, epoch, operationId, tool: "t" })
          : mode === "admit"
            ? // the worker holds the work through the lease its producer passed (the root run's covers the tree)
              await admitCheck({ keyHash: key.hash, operationId, leaseId: runs[0]!.leaseId })
            : await heartbeatCheck({ keyHash: key.hash, operationId, leaseId: runs[0]!.leaseId });
      expect(got.ok).toBe(true);
      if (!got.ok) return;
      const gotDecision =
        "decision" in got
          ? { decision: got.decision, reason: got.reason }
          : { decision: got.continue ? "allow|hold" : "deny", reason: got.reason };
      const wantDecision =
        "decision" in got
          ? { decision: expected.decision, reason: expected.reason }
          : { decision: expected.decision === "deny" ? "deny" : "allow|hold", reason: expected.reason };
      expect({ ...gotDecision, currentEpoch: got.currentEpoch }).toEqual({ ...wantDecision, currentEpoch: expected.currentEpoch });

      // the operation's resulting state
      const row = await prisma().operation.findUnique({ where: { teamId_operationId: { teamId: team.teamId, operationId } } });
      const e = expected.effect;
      const wantState =
        e.kind === "insert" ? e.state : e.kind === "start" ? "running" : e.kind === "deny_registered" ? "denied" : (op?.state ?? null);
      expect(row?.state ?? null).toBe(wantState);
      // the breaker probe claims
      for (const id of expected.probeClaims) {
        expect(await prisma().run.findUniqueOrThrow({ where: { id } })).toMatchObject({
          breaker: "half_open",
          breakerProbeOpId: operationId,
        });
      }

      // replay: ask again with facts re-read from the database
      if (mode === "gate" && chain) {
        const f2: GateFacts = {
          ...f,
          now: Date.now(),
          chain: await loadChain(runs.slice(0, reqRunIdx + 1)),
          operation: row
            ? { operationId, runId: row.runId, state: row.state, stateReason: row.stateReason, expiresAt: row.expiresAt?.getTime() ?? null }
            : null,
        };
        const again = await askGate({ keyHash: key.hash, runId, leaseId, epoch, operationId, tool: "t" });
        const want2 = decideGate(f2);
        expect(again).toMatchObject({ ok: true, decision: want2.decision, reason: want2.reason, currentEpoch: want2.currentEpoch });
        expect(await prisma().operation.count({ where: { teamId: team.teamId, operationId } })).toBe(
          row ? 1 : want2.effect.kind === "insert" ? 1 : 0,
        );
      }
      compared++;
      seen.add(`${mode}:${expected.reason}`);
      if (liveScopes.length > 0) scoped.add(expected.reason);
      reasons.add(expected.reason);
    }),
    // Besides the random cases, one held and one killed by a live scope always run, so the coverage
    // check below tests the gate, not the generator's luck (a random batch of 150 sometimes has neither).
    { numRuns: 150, examples: (["pause", "kill"] as const).map((action) => [scopedExample(action)]) },
  );
  expect(compared).toBeGreaterThanOrEqual(150);
  // The generator reaches (nearly) every reason code; print what this run covered.
  console.info(
    `oracle: ${compared} cases, reasons ${[...reasons].sort().join(", ")}; mode:reason pairs ${seen.size}; with live scopes: ${[...scoped].sort().join(", ")}`,
  );
  expect(reasons.size).toBeGreaterThanOrEqual(9);
  // scopes were live on cases that a scope held and a scope killed
  expect([...scoped]).toEqual(expect.arrayContaining(["paused", "killed"]));
}, 120_000);

async function loadChain(runs: FixtureRun[]): Promise<RunFacts[]> {
  const rows = await prisma().run.findMany({ where: { id: { in: runs.map((r) => r.runId) } } });
  const byId = new Map(rows.map((r) => [r.id, r]));
  return runs.map((x) => {
    const r = byId.get(x.runId)!;
    return {
      runId: r.id,
      lifecycle: r.lifecycle,
      breaker: r.breaker,
      breakerChangedAt: r.breakerChangedAt.getTime(),
      breakerProbeOpId: r.breakerProbeOpId,
      breakerHeld: r.breakerHeld,
      epoch: r.epoch,
      finishedAt: r.finishedAt?.getTime() ?? null,
    };
  });
}
