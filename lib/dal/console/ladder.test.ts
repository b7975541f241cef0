import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { ladderOf, type LadderFacts } from "./ladder";

const t = (s: number) => new Date(Date.UTC(2026, 10, 29, 12, 0, s)).toISOString();
const maybe = (s: number) => fc.option(fc.constant(t(s)), { nil: null });

const facts = fc.record({
  phase: fc.constantFrom("revoking", "settling", "quiet", "complete") as fc.Arbitrary<LadderFacts["phase"]>,
  requestedAt: fc.constant(t(0)), requestedBy: fc.constant("user:u1"), reason: fc.constant("r"),
  observedAt: maybe(1), observedMeaning: fc.option(fc.constantFrom("signal_accepted", "turn_interrupted"), { nil: null }),
  dispatchStoppedAt: maybe(2), queuedCancelledAt: maybe(3),
  queuedCancelled: fc.nat(5), scheduledCancelled: fc.nat(5), retriesCancelled: fc.nat(5),
  quiescedAt: maybe(4), inFlight: fc.nat(5), lastSettledAt: maybe(5),
  settled: fc.record({ cancelledWithoutEffect: fc.nat(3), completedAndVerified: fc.nat(3), unknown: fc.nat(3), pending: fc.nat(3) }),
  openReconciliations: fc.nat(3), quietUntil: maybe(6), completedAt: maybe(7),
  decision: fc.constantFrom("stopped_and_quiet", "stop_incomplete", null) as fc.Arbitrary<LadderFacts["decision"]>,
});

describe("stop ladder", () => {
  it("never shows a requested-but-unacknowledged stop as observed", () => {
    fc.assert(fc.property(facts, (f) => {
      const observed = ladderOf(f).find((r) => r.key === "observed")!;
      if (f.observedAt === null) expect(observed.status).not.toBe("done");
      else expect(observed.status).toBe("done");
    }));
  });

  it("shows effects as settled only with nothing pending, unknown or open", () => {
    fc.assert(fc.property(facts, (f) => {
      const settled = ladderOf(f).find((r) => r.key === "settled")!;
      if (settled.status === "done") {
        expect(f.settled.pending + f.settled.unknown + f.openReconciliations).toBe(0);
      }
      if (f.settled.unknown > 0) expect(settled.status).toBe("uncertain");
    }));
  });

  it("marks the receipt rung done only for stopped_and_quiet", () => {
    fc.assert(fc.property(facts, (f) => {
      const receipt = ladderOf(f).find((r) => r.key === "receipt")!;
      expect(receipt.status === "done").toBe(f.completedAt !== null && f.decision === "stopped_and_quiet");
    }));
  });

  it("keeps the article's order of rungs", () => {
    const f: LadderFacts = {
      phase: "complete", requestedAt: t(0), requestedBy: "user:u1", reason: "wrong region", observedAt: null, observedMeaning: null,
      dispatchStoppedAt: t(0), queuedCancelledAt: t(0), queuedCancelled: 2, scheduledCancelled: 1, retriesCancelled: 0,
      quiescedAt: t(3), inFlight: 1, lastSettledAt: t(3), settled: { cancelledWithoutEffect: 1, completedAndVerified: 0, unknown: 0, pending: 0 },
      openReconciliations: 0, quietUntil: t(5), completedAt: t(6), decision: "stopped_and_quiet",
    };
    const rungs = ladderOf(f);
    expect(rungs.map((r) => r.key)).toEqual(["requested", "observed", "dispatch", "queued", "quiesced", "settled", "receipt"]);
    expect(rungs.find((r) => r.key === "observed")!.status).toBe("uncertain");
    expect(rungs.find((r) => r.key === "queued")!.detail).toContain("2 queued jobs, 1 scheduled job, 0 retries");
  });
});
