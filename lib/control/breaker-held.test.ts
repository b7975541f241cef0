// An operator's trip is held: whatever time passes and whatever outcomes arrive, only a reset closes it.
import { expect, test } from "vitest";
import fc from "fast-check";
import { applyBreakerAction, breakerAfterOutcome, displayedBreaker, effectiveBreaker, type BreakerRecord } from "./breaker";

const closed: BreakerRecord = { state: "closed", changedAt: 0, failures: 0, probeOpId: null, changedBy: null, reason: null };

test("property: a tripped breaker blocks at any later time and ignores outcomes until reset", () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 0, max: 10 ** 12 }),
      fc.array(fc.record({ op: fc.string({ maxLength: 4 }), outcome: fc.constantFrom<"succeeded" | "failed">("succeeded", "failed") }), {
        maxLength: 20,
      }),
      (later, outcomes) => {
        let b = applyBreakerAction(closed, "trip", { now: 0, by: "user:u", reason: "incident" }).record;
        for (const o of outcomes) b = breakerAfterOutcome(b, { operationId: o.op, outcome: o.outcome }, later).record;
        expect(b.held).toBe(true);
        expect(effectiveBreaker(b, later, "any").state).toBe("blocked");
        expect(displayedBreaker(b, later)).toBe("open");
        const reset = applyBreakerAction(b, "reset", { now: later, by: "user:u", reason: "ok" }).record;
        expect(effectiveBreaker(reset, later).state).toBe("closed");
        expect(reset.held).toBe(false);
      },
    ),
  );
});
