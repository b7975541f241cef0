import { describe, expect, test } from "vitest";
import fc from "fast-check";
import {
  decideGate,
  decideAuthority,
  heartbeatContinues,
  type GateFacts,
  type LeaseFacts,
  type OperationFacts,
  type RunFacts,
} from "./gate";
import { BREAKER_STATES, GATE_REASONS, LIFECYCLES, OPERATION_STATES } from "./types";

const NOW = 1_800_000_000_000;
const S = 1000;

function facts(depth: number, over: Partial<GateFacts> = {}): GateFacts {
  const chain: RunFacts[] = Array.from({ length: depth }, (_, i) => ({
    runId: `r${i}`,
    lifecycle: "normal",
    breaker: "closed",
    breakerChangedAt: NOW - 3600 * S,
    breakerProbeOpId: null,
    epoch: 1,
  }));
  const leaseChain: LeaseFacts[] = chain.map((r, i) => ({ leaseId: `l${i}`, runId: r.runId, validUntil: NOW + 3600 * S, revokedAt: null }));
  return {
    now: NOW,
    mode: "gate",
    request: { runId: `r${depth - 1}`, leaseId: `l${depth - 1}`, epoch: 1, operationId: "op" },
    chain,
    leaseChain,
    operation: null,
    ...over,
  };
}

const runArb = (i: number) =>
  fc.record<RunFacts>({
    runId: fc.constant(`r${i}`),
    lifecycle: fc.constantFrom(...LIFECYCLES),
    breaker: fc.constantFrom(...BREAKER_STATES),
    breakerChangedAt: fc.constantFrom(NOW - 5 * S, NOW - 40 * S, NOW - 120 * S),
    breakerProbeOpId: fc.constantFrom(null, "op", "other"),
    epoch: fc.integer({ min: 1, max: 3 }),
  });
const leaseArb = (i: number) =>
  fc.record<LeaseFacts>({
    leaseId: fc.constant(`l${i}`),
    runId: fc.constant(`r${i}`),
    validUntil: fc.constantFrom(NOW - 60 * S, NOW + 3600 * S, NOW + 3600 * S),
    revokedAt: fc.constantFrom(null, null, null, NOW - S),
  });
const opArb = fc.option(
  fc.record<OperationFacts>({
    operationId: fc.constant("op"),
    runId: fc.constantFrom("leaf", "r0"),
    state: fc.constantFrom(...OPERATION_STATES),
    stateReason: fc.constantFrom(null, "killed", "stale_epoch", "not-a-reason"),
    expiresAt: fc.constantFrom(null, NOW - S, NOW + 3600 * S),
  }),
  { nil: null, freq: 2 },
);

const factsArb: fc.Arbitrary<GateFacts> = fc
  .integer({ min: 1, max: 4 })
  .chain((depth) =>
    fc.record({
      chain: fc.tuple(...Array.from({ length: depth }, (_, i) => runArb(i))),
      leaseChain: fc.tuple(...Array.from({ length: depth }, (_, i) => leaseArb(i))),
      epoch: fc.integer({ min: 0, max: 4 }),
      mode: fc.constantFrom("gate", "admit", "heartbeat") as fc.Arbitrary<GateFacts["mode"]>,
      op: opArb,
      breakChain: fc.constantFrom("none", "none", "none", "none", "hole", "missing", "wrong-lease"),
    }),
  )
  .map(({ chain, leaseChain, epoch, mode, op, breakChain }) => {
    const depth = chain.length;
    const runId = `r${depth - 1}`;
    const f: GateFacts = {
      now: NOW,
      mode,
      request: { runId, leaseId: `l${depth - 1}`, epoch, operationId: "op" },
      chain,
      leaseChain,
      operation: op ? { ...op, runId: op.runId === "leaf" ? runId : op.runId } : null,
    };
    if (breakChain === "hole") f.chain = chain.map((r, i) => (i === 0 && depth > 1 ? null : r));
    if (breakChain === "missing") f.chain = null;
    if (breakChain === "wrong-lease") f.request = { ...f.request, leaseId: "l0-other" };
    return f;
  });

describe("decideGate: the order of docs/architecture.md#the-gate", () => {
  test("each reason code, first match wins", () => {
    expect(decideGate(facts(2))).toMatchObject({
      decision: "allow",
      reason: "allowed",
      effect: { kind: "insert", state: "running" },
      currentEpoch: 1,
    });
    expect(decideGate(facts(2, { chain: null }))).toMatchObject({
      decision: "deny",
      reason: "missing_state",
      effect: { kind: "none" },
      currentEpoch: null,
    });
    const f = facts(3);
    f.chain = f.chain!.map((r, i) => (i === 0 ? { ...r!, lifecycle: "killed" } : r));
    expect(decideGate(f)).toMatchObject({ decision: "deny", reason: "parent_revoked", effect: { kind: "insert", state: "denied" } });
    const own = facts(1);
    own.chain = [{ ...own.chain![0]!, lifecycle: "killed", breaker: "open", breakerChangedAt: NOW }];
    own.leaseChain = [{ ...own.leaseChain![0]!, revokedAt: NOW - S }];
    expect(decideGate(own).reason).toBe("killed");
    const revokedOwn = facts(2);
    revokedOwn.leaseChain = revokedOwn.leaseChain!.map((l, i) => (i === 1 ? { ...l!, revokedAt: NOW - S } : l));
    expect(decideGate(revokedOwn).reason).toBe("lease_revoked");
    const revokedAnc = facts(2);
    revokedAnc.leaseChain = revokedAnc.leaseChain!.map((l, i) => (i === 0 ? { ...l!, revokedAt: NOW - S, validUntil: NOW - S } : l));
    expect(decideGate(revokedAnc).reason).toBe("parent_revoked");
    const expired = facts(2);
    expired.leaseChain = expired.leaseChain!.map((l, i) => (i === 0 ? { ...l!, validUntil: NOW } : l));
    expect(decideGate(expired).reason).toBe("lease_expired");
    const stale = facts(2);
    stale.chain = stale.chain!.map((r, i) => (i === 0 ? { ...r!, epoch: 2 } : r));
    expect(decideGate(stale)).toMatchObject({ reason: "stale_epoch", currentEpoch: 2 });
    expect(
      decideGate(
        facts(1, { operation: { operationId: "op", runId: "r0", state: "queued", stateReason: null, expiresAt: NOW }, mode: "admit" }),
      ),
    ).toMatchObject({ decision: "deny", reason: "operation_expired", effect: { kind: "deny_registered" } });
    const br = facts(2);
    br.chain = br.chain!.map((r, i) => (i === 0 ? { ...r!, breaker: "open", breakerChangedAt: NOW - 5 * S, lifecycle: "paused" } : r));
    expect(decideGate(br).reason).toBe("breaker_open");
    const paused = facts(2);
    paused.chain = paused.chain!.map((r, i) => (i === 0 ? { ...r!, lifecycle: "paused" } : r));
    expect(decideGate(paused)).toMatchObject({ decision: "hold", reason: "paused", effect: { kind: "none" } });
  });

  test("half-open: the probe is claimed only by an allow, and the probe's owner passes", () => {
    const f = facts(2);
    f.chain = f.chain!.map((r, i) => (i === 0 ? { ...r!, breaker: "open", breakerChangedAt: NOW - 40 * S } : r));
    expect(decideGate(f)).toMatchObject({ decision: "allow", probeClaims: ["r0"] });
    f.chain = f.chain.map((r, i) => (i === 1 ? { ...r!, lifecycle: "paused" } : r));
    expect(decideGate(f)).toMatchObject({ decision: "hold", probeClaims: [] });
    const owned = facts(1);
    owned.chain = [{ ...owned.chain![0]!, breaker: "half_open", breakerProbeOpId: "op", breakerChangedAt: NOW - S }];
    expect(decideGate(owned)).toMatchObject({ decision: "allow", probeClaims: [] });
    owned.request = { ...owned.request, operationId: "someone-else" };
    expect(decideGate(owned).reason).toBe("breaker_open");
  });

  test("replay rules", () => {
    const op = (state: OperationFacts["state"], stateReason: string | null = null): OperationFacts => ({
      operationId: "op",
      runId: "r0",
      state,
      stateReason,
      expiresAt: null,
    });
    expect(decideGate(facts(1, { operation: op("succeeded") }))).toMatchObject({
      decision: "deny",
      reason: "already_applied",
      replay: true,
      effect: { kind: "none" },
    });
    expect(decideGate(facts(1, { operation: op("failed") })).reason).toBe("already_applied");
    expect(decideGate(facts(1, { operation: op("running") }))).toMatchObject({ decision: "allow", replay: true, effect: { kind: "none" } });
    expect(decideGate(facts(1, { operation: op("denied", "stale_epoch") }))).toMatchObject({ decision: "deny", reason: "stale_epoch" });
    expect(decideGate(facts(1, { operation: op("denied", null) })).reason).toBe("missing_state");
    expect(decideGate(facts(1, { operation: op("cancelled_not_started") })).reason).toBe("killed");
    expect(decideGate(facts(1, { operation: { ...op("running"), runId: "elsewhere" } })).reason).toBe("missing_state");
    expect(decideGate(facts(1, { operation: op("queued"), mode: "admit" }))).toMatchObject({
      decision: "allow",
      effect: { kind: "start" },
    });
    expect(decideGate(facts(1, { operation: op("queued"), mode: "heartbeat" }))).toMatchObject({
      decision: "allow",
      effect: { kind: "none" },
    });
    expect(decideGate(facts(1, { mode: "admit" }))).toMatchObject({ decision: "deny", reason: "missing_state" });
  });
});

describe("decideGate properties", () => {
  test("a killed run, or any descendant of one, never allows (fresh or replayed)", () => {
    fc.assert(
      fc.property(factsArb, (f) => {
        const killed = f.chain?.some((r) => r?.lifecycle === "killed");
        if (killed) expect(decideGate(f).decision).toBe("deny");
      }),
      { numRuns: 2000 },
    );
  });

  test("the decision is a pure function of the facts (same facts → same answer, input untouched)", () => {
    fc.assert(
      fc.property(factsArb, (f) => {
        const copy = structuredClone(f);
        const a = decideGate(f);
        expect(f).toEqual(copy);
        expect(decideGate(copy)).toEqual(a);
      }),
      { numRuns: 500 },
    );
  });

  test("no existing operation ever gets a second insert; holds never change an operation", () => {
    fc.assert(
      fc.property(factsArb, (f) => {
        const v = decideGate(f);
        if (f.operation) expect(v.effect.kind).not.toBe("insert");
        if (f.operation?.state === "running") expect(v.effect.kind).toBe("none");
        if (v.decision === "hold") expect(v.effect.kind).toBe("none");
        if (v.decision !== "allow") expect(v.probeClaims).toEqual([]);
        expect(GATE_REASONS).toContain(v.reason);
        expect(v.decision === "allow").toBe(v.reason === "allowed");
        expect(v.decision === "hold").toBe(v.reason === "paused");
      }),
      { numRuns: 2000 },
    );
  });

  test("anything unreadable denies missing_state", () => {
    fc.assert(
      fc.property(factsArb, (f) => {
        const broken =
          !f.chain || f.chain.some((r) => r === null) || f.request.leaseId !== f.leaseChain?.[f.leaseChain.length - 1]?.leaseId;
        if (broken && !f.operation) expect(decideGate(f)).toMatchObject({ decision: "deny", reason: "missing_state" });
      }),
      { numRuns: 1000 },
    );
  });

  test("pausing or killing any run of the chain never turns a non-allow into an allow", () => {
    fc.assert(
      fc.property(factsArb, fc.nat(3), fc.constantFrom("paused", "killed"), (f, i, lc) => {
        if (!f.chain || !f.chain[i % f.chain.length]) return;
        const before = decideAuthority(f).decision;
        const worse = {
          ...f,
          chain: f.chain.map((r, j) => (j === i % f.chain!.length && r && r.lifecycle !== "killed" ? { ...r, lifecycle: lc } : r)),
        };
        if (before !== "allow") expect(decideAuthority(worse as GateFacts).decision).not.toBe("allow");
      }),
      { numRuns: 1000 },
    );
  });

  test("stale_epoch exactly when the stamp is below the ancestry's highest epoch (and nothing earlier matched)", () => {
    fc.assert(
      fc.property(factsArb, (f) => {
        const v = decideGate(f);
        if (v.reason === "stale_epoch" && !v.replay) expect(f.request.epoch).toBeLessThan(v.currentEpoch!);
        if (v.decision === "allow" && v.currentEpoch !== null) expect(f.request.epoch).toBeGreaterThanOrEqual(v.currentEpoch);
      }),
      { numRuns: 1000 },
    );
  });

  test("heartbeat continues exactly while the answer is not a deny", () => {
    expect(heartbeatContinues({ decision: "allow" })).toBe(true);
    expect(heartbeatContinues({ decision: "hold" })).toBe(true);
    expect(heartbeatContinues({ decision: "deny" })).toBe(false);
  });
});
