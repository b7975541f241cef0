import { describe, expect, test } from "vitest";
import fc from "fast-check";
import { applyLifecycle, applyLifecycleRecord, LIFECYCLE_ACTIONS, type LifecycleAction, type LifecycleRecord } from "./lifecycle";
import { applyBreakerAction, breakerAfterOutcome, BREAKER_DEFAULTS, type BreakerRecord } from "./breaker";
import { LIFECYCLES, BREAKER_STATES } from "./types";

const action = fc.constantFrom<LifecycleAction>(...LIFECYCLE_ACTIONS);
const lifecycleRecord = fc.record<LifecycleRecord>({
  lifecycle: fc.constantFrom(...LIFECYCLES),
  changedAt: fc.integer({ min: 0, max: 2_000_000_000_000 }),
  changedBy: fc.option(fc.string(), { nil: null }),
  reason: fc.option(fc.string(), { nil: null }),
});
const breakerRecord = fc.record<BreakerRecord>({
  state: fc.constantFrom(...BREAKER_STATES),
  changedAt: fc.integer({ min: 0, max: 2_000_000_000_000 }),
  failures: fc.nat({ max: 20 }),
  probeOpId: fc.option(fc.constantFrom("op-a", "op-b"), { nil: null }),
  changedBy: fc.option(fc.string(), { nil: null }),
  reason: fc.option(fc.string(), { nil: null }),
});

describe("applyLifecycle", () => {
  test("the transition table", () => {
    expect(applyLifecycle("normal", "pause")).toEqual({ ok: true, state: "paused", changed: true });
    expect(applyLifecycle("paused", "resume")).toEqual({ ok: true, state: "normal", changed: true });
    expect(applyLifecycle("normal", "kill")).toEqual({ ok: true, state: "killed", changed: true });
    expect(applyLifecycle("paused", "kill")).toEqual({ ok: true, state: "killed", changed: true });
    expect(applyLifecycle("paused", "pause")).toEqual({ ok: true, state: "paused", changed: false });
    expect(applyLifecycle("normal", "resume")).toEqual({ ok: true, state: "normal", changed: false });
    expect(applyLifecycle("killed", "kill")).toEqual({ ok: true, state: "killed", changed: false });
    expect(applyLifecycle("killed", "resume")).toMatchObject({ ok: false, code: "killed_is_terminal" });
    expect(applyLifecycle("killed", "pause")).toMatchObject({ ok: false, code: "killed_is_terminal" });
  });

  test("killed is terminal: no sequence of actions leaves it", () => {
    fc.assert(
      fc.property(fc.constantFrom(...LIFECYCLES), fc.array(action, { maxLength: 30 }), (start, actions) => {
        let s = start;
        let killed = s === "killed";
        for (const a of actions) {
          const r = applyLifecycle(s, a);
          if (r.ok) s = r.state;
          if (killed) expect(s).toBe("killed");
          if (s === "killed") killed = true;
        }
      }),
    );
  });

  test("lifecycle actions never touch the breaker, breaker transitions never touch lifecycle", () => {
    fc.assert(
      fc.property(
        lifecycleRecord,
        breakerRecord,
        fc.array(
          fc.oneof(
            action.map((a) => ({ t: "life" as const, a })),
            fc.constantFrom("trip", "reset").map((a) => ({ t: "breaker" as const, a: a as "trip" | "reset" })),
            fc.record({
              t: fc.constant("outcome" as const),
              op: fc.constantFrom("op-a", "op-b", "op-c"),
              outcome: fc.constantFrom("succeeded", "failed") as fc.Arbitrary<"succeeded" | "failed">,
            }),
          ),
          { maxLength: 25 },
        ),
        fc.integer({ min: 0, max: 1_000_000 }),
        (life0, br0, steps, t0) => {
          let run = { life: life0, breaker: br0 };
          let now = 2_000_000_000_000 + t0;
          for (const s of steps) {
            now += 7_000;
            const before = structuredClone(run);
            if (s.t === "life") {
              const r = applyLifecycleRecord(run.life, s.a, { now, by: "op", reason: "r" });
              if (r.ok) run = { ...run, life: r.record };
              expect(run.breaker).toEqual(before.breaker);
            } else if (s.t === "breaker") {
              run = { ...run, breaker: applyBreakerAction(run.breaker, s.a, { now, by: "op", reason: "r" }).record };
              expect(run.life).toEqual(before.life);
            } else {
              run = {
                ...run,
                breaker: breakerAfterOutcome(run.breaker, { operationId: s.op, outcome: s.outcome }, now, BREAKER_DEFAULTS).record,
              };
              expect(run.life).toEqual(before.life);
            }
          }
        },
      ),
    );
  });

  test("an unchanged action returns the very same record (nothing to write)", () => {
    fc.assert(
      fc.property(lifecycleRecord, action, (rec, a) => {
        const r = applyLifecycleRecord(rec, a, { now: 1, by: "x", reason: "y" });
        if (r.ok && !r.changed) expect(r.record).toBe(rec);
        if (r.ok && r.changed) expect(r.record).toMatchObject({ changedAt: 1, changedBy: "x", reason: "y" });
      }),
    );
  });
});
