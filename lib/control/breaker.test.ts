import { describe, expect, test } from "vitest";
import fc from "fast-check";
import {
  applyBreakerAction,
  breakerAfterOutcome,
  BREAKER_DEFAULTS,
  claimProbe,
  displayedBreaker,
  effectiveBreaker,
  type BreakerRecord,
} from "./breaker";

const T0 = 1_800_000_000_000;
const closed: BreakerRecord = { state: "closed", changedAt: T0, failures: 0, probeOpId: null, changedBy: null, reason: null };
const cfg = BREAKER_DEFAULTS;

function fail(b: BreakerRecord, at: number, op = "op-x") {
  return breakerAfterOutcome(b, { operationId: op, outcome: "failed" }, at);
}

describe("breaker", () => {
  test("defaults: 5 failures / 60 s window / 30 s cool-down", () => {
    expect(cfg).toMatchObject({ failureThreshold: 5, windowMs: 60_000, coolDownMs: 30_000 });
  });

  test("N failures within the window trip it; spread over two windows they do not", () => {
    let b = closed;
    for (let i = 0; i < 4; i++) b = fail(b, T0 + i * 1000).record;
    expect(b.state).toBe("closed");
    const r = fail(b, T0 + 5000);
    expect(r.transition).toBe("tripped");
    expect(r.record).toMatchObject({ state: "open", changedAt: T0 + 5000, probeOpId: null });

    let c = closed;
    for (let i = 0; i < 4; i++) c = fail(c, T0 + i * 1000).record;
    const late = fail(c, T0 + 61_000);
    expect(late.transition).toBe("window_restarted");
    expect(late.record).toMatchObject({ state: "closed", failures: 1, changedAt: T0 + 61_000 });
  });

  test("successes in closed state change nothing", () => {
    const r = breakerAfterOutcome({ ...closed, failures: 3 }, { operationId: "a", outcome: "succeeded" }, T0 + 10);
    expect(r.changed).toBe(false);
  });

  test("open → (cool-down) probe available → claimed → closed on success / open on failure", () => {
    const open: BreakerRecord = { ...closed, state: "open", changedAt: T0, failures: 5 };
    expect(effectiveBreaker(open, T0 + cfg.coolDownMs - 1)).toEqual({ state: "blocked", until: T0 + cfg.coolDownMs });
    expect(displayedBreaker(open, T0 + cfg.coolDownMs - 1)).toBe("open");
    expect(effectiveBreaker(open, T0 + cfg.coolDownMs)).toEqual({ state: "probe_available" });
    expect(displayedBreaker(open, T0 + cfg.coolDownMs)).toBe("half_open");
    const half = claimProbe(open, "probe-1", T0 + cfg.coolDownMs);
    expect(half).toMatchObject({ state: "half_open", probeOpId: "probe-1" });
    expect(effectiveBreaker(half, T0 + cfg.coolDownMs + 1, "other").state).toBe("blocked");
    expect(effectiveBreaker(half, T0 + cfg.coolDownMs + 1, "probe-1").state).toBe("probe_owned");
    // a non-probe outcome while half open changes nothing
    expect(breakerAfterOutcome(half, { operationId: "other", outcome: "failed" }, T0 + 40_000).changed).toBe(false);
    expect(breakerAfterOutcome(half, { operationId: "probe-1", outcome: "succeeded" }, T0 + 40_000).record).toMatchObject({
      state: "closed",
      failures: 0,
      probeOpId: null,
    });
    expect(breakerAfterOutcome(half, { operationId: "probe-1", outcome: "failed" }, T0 + 40_000).record).toMatchObject({
      state: "open",
      changedAt: T0 + 40_000,
      probeOpId: null,
    });
  });

  test("a lost probe frees the slot after the probe timeout", () => {
    const half: BreakerRecord = { ...closed, state: "half_open", probeOpId: "lost", changedAt: T0 };
    expect(effectiveBreaker(half, T0 + cfg.probeTimeoutMs - 1, "next").state).toBe("blocked");
    expect(effectiveBreaker(half, T0 + cfg.probeTimeoutMs, "next").state).toBe("probe_available");
  });

  test("explicit trip opens from anywhere, explicit reset closes from anywhere", () => {
    fc.assert(
      fc.property(
        fc.constantFrom("closed", "open", "half_open"),
        fc.nat(10),
        fc.option(fc.string(), { nil: null }),
        (state, failures, probe) => {
          const b: BreakerRecord = { ...closed, state, failures, probeOpId: probe };
          expect(applyBreakerAction(b, "trip", { now: T0 + 1, by: "u", reason: "r" }).record).toMatchObject({
            state: "open",
            changedAt: T0 + 1,
            probeOpId: null,
          });
          expect(applyBreakerAction(b, "reset", { now: T0 + 1, by: "u", reason: "r" }).record).toMatchObject({
            state: "closed",
            failures: 0,
            probeOpId: null,
          });
        },
      ),
    );
  });

  test("property: at most one probe is ever claimable at a time", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 200_000 }),
        fc.array(fc.integer({ min: 0, max: 100_000 }), { maxLength: 20 }),
        (start, gaps) => {
          let b: BreakerRecord = { ...closed, state: "open", changedAt: T0 };
          let now = T0 + start;
          let n = 0;
          for (const g of gaps) {
            now += g;
            const id = `p${n++}`;
            if (effectiveBreaker(b, now, id).state === "probe_available") b = claimProbe(b, id, now);
            // the claimed probe (if any) is the only one not blocked, and only until its timeout
            if (b.state === "half_open" && b.probeOpId && now < b.changedAt + cfg.probeTimeoutMs) {
              expect(effectiveBreaker(b, now, "someone-else").state).toBe("blocked");
            }
          }
        },
      ),
    );
  });

  test("property: the breaker never opens without a trip, a failed probe or N failures", () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            gap: fc.integer({ min: 0, max: 90_000 }),
            outcome: fc.constantFrom("succeeded", "failed") as fc.Arbitrary<"succeeded" | "failed">,
          }),
          { maxLength: 40 },
        ),
        (events) => {
          let b = closed;
          let now = T0;
          for (const e of events) {
            now += e.gap;
            const r = breakerAfterOutcome(b, { operationId: "x", outcome: e.outcome }, now);
            if (r.record.state === "open" && b.state !== "open") {
              expect(r.transition).toBe("tripped");
              expect(r.record.failures).toBeGreaterThanOrEqual(cfg.failureThreshold);
            }
            b = r.record;
          }
        },
      ),
    );
  });
});
