import { describe, expect, test } from "vitest";
import fc from "fast-check";
import { buildLadder, RUNG_IDS, type LadderFacts } from "./ladder";
import { BARRIER_PHASES, isBarrierOpen, quietPeriodFor, strongerMeaning, OBSERVED_MEANINGS } from "./barrier";

const t = (ms: number) => new Date(Date.UTC(2026, 7, 16, 10, 51, 4) + ms);
const facts: fc.Arbitrary<LadderFacts> = fc.record({
  requestedAt: fc.constant(t(0)),
  requestedBy: fc.constant("user:a"),
  reason: fc.constant("r"),
  phase: fc.constantFrom(...BARRIER_PHASES),
  decision: fc.constantFrom(null, "stopped_and_quiet" as const, "stop_incomplete" as const),
  observed: fc.option(fc.record({ at: fc.constant(t(100)), meaning: fc.constantFrom(...OBSERVED_MEANINGS), acks: fc.constant([]) }), { nil: null }),
  dispatchStoppedAt: fc.option(fc.constant(t(5)), { nil: null }),
  queuedCancelledAt: fc.option(fc.constant(t(5)), { nil: null }),
  quiescedAt: fc.option(fc.constant(t(500)), { nil: null }),
  completedAt: fc.option(fc.constant(t(900)), { nil: null }),
  quietUntil: fc.option(fc.constant(t(800)), { nil: null }),
  newEpoch: fc.integer({ min: 2, max: 9 }),
  runsKilled: fc.nat(5), leasesRevoked: fc.nat(5), queuedCancelled: fc.nat(5), scheduledCancelled: fc.nat(5), retriesCancelled: fc.nat(5),
  inFlight: fc.nat(5), pending: fc.nat(3), unknown: fc.nat(3), lateRequestsDenied: fc.nat(3),
  reconciliationHolders: fc.array(fc.constantFrom("unassigned", "m@x.dev")),
});

test("six rungs in order; requested without acknowledgment is never done", () => {
  fc.assert(fc.property(facts, (f) => {
    const ladder = buildLadder(f);
    expect(ladder.map((r) => r.id)).toEqual([...RUNG_IDS]);
    const observed = ladder[1]!;
    if (!f.observed) {
      expect(observed.status).toBe(f.phase === "complete" ? "uncertain" : "pending");
      expect(observed.at).toBeNull();
    } else {
      expect(observed.status).toBe("done");
      expect(observed.evidence.meaning).toBe(f.observed.meaning);
    }
    const settled = ladder[5]!;
    if (settled.status === "done") expect(f.decision === "stopped_and_quiet" && f.phase === "complete").toBe(true);
    if (f.pending > 0) expect(ladder[4]!.status).toBe("pending");
  }));
});

test("barrier helpers", () => {
  expect(isBarrierOpen("complete", "stopped_and_quiet")).toBe(false);
  expect(isBarrierOpen("complete", "stop_incomplete")).toBe(true);
  expect(isBarrierOpen("settling", null)).toBe(true);
  expect(quietPeriodFor([])).toBe(0);
  expect(quietPeriodFor([{ name: "deploy-sim", quietPeriodSeconds: 30 }, { name: "pg-boss:checks", quietPeriodSeconds: null }])).toBe(30);
  expect(quietPeriodFor([{ name: "bullmq:x", quietPeriodSeconds: null }, { name: "local", quietPeriodSeconds: 0 }])).toBe(5);
  fc.assert(fc.property(fc.constantFrom(null, ...OBSERVED_MEANINGS), fc.constantFrom(...OBSERVED_MEANINGS), (a, b) => {
    const s = strongerMeaning(a, b);
    expect(OBSERVED_MEANINGS.indexOf(s)).toBe(Math.max(a ? OBSERVED_MEANINGS.indexOf(a) : -1, OBSERVED_MEANINGS.indexOf(b)));
  }));
});

describe("acknowledgment meanings", () => {
  test("every meaning says what it does not prove; an unknown meaning is read as the weakest", async () => {
    const { OBSERVED_MEANINGS, describeObservedMeaning } = await import("./barrier");
    for (const m of OBSERVED_MEANINGS) expect(describeObservedMeaning(m)).toMatch(/not proof|separately/);
    expect(describeObservedMeaning("something_else")).toMatch(/signal accepted/);
    expect(describeObservedMeaning("toString")).toMatch(/signal accepted/);
  });
});
