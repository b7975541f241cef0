import { describe, expect, test } from "vitest";
import fc from "fast-check";
import { isBarrierOpen, quietPeriodFor, strongerMeaning, OBSERVED_MEANINGS } from "./barrier";

test("barrier helpers", () => {
  expect(isBarrierOpen("complete", "stopped_and_quiet")).toBe(false);
  expect(isBarrierOpen("complete", "stop_incomplete")).toBe(true);
  expect(isBarrierOpen("settling", null)).toBe(true);
  // The team's period is a floor: a stop with no provider still waits it out.
  expect(quietPeriodFor([], 2)).toBe(2);
  expect(quietPeriodFor([], 0.05)).toBe(0.05);
  expect(
    quietPeriodFor(
      [
        { name: "deploy-sim", quietPeriodSeconds: 30 },
        { name: "pg-boss:checks", quietPeriodSeconds: null },
      ],
      2,
    ),
  ).toBe(30);
  expect(
    quietPeriodFor(
      [
        { name: "bullmq:x", quietPeriodSeconds: null },
        { name: "local", quietPeriodSeconds: 0 },
      ],
      2,
    ),
  ).toBe(5);
  fc.assert(
    fc.property(fc.constantFrom(null, ...OBSERVED_MEANINGS), fc.constantFrom(...OBSERVED_MEANINGS), (a, b) => {
      const s = strongerMeaning(a, b);
      expect(OBSERVED_MEANINGS.indexOf(s)).toBe(Math.max(a ? OBSERVED_MEANINGS.indexOf(a) : -1, OBSERVED_MEANINGS.indexOf(b)));
    }),
  );
});

describe("acknowledgment meanings", () => {
  test("every meaning says what it does not prove; an unknown meaning is read as the weakest", async () => {
    const { OBSERVED_MEANINGS, describeObservedMeaning } = await import("./barrier");
    for (const m of OBSERVED_MEANINGS) expect(describeObservedMeaning(m)).toMatch(/not proof|separately/);
    expect(describeObservedMeaning("something_else")).toMatch(/signal accepted/);
    expect(describeObservedMeaning("toString")).toMatch(/signal accepted/);
  });
});
