// The bench's pooling of interleaved rounds (bench/lib/measure.ts pooled): one figure over every round's
// calls, as if they had been one measure — the ratio the gate and HTTP sections report rests on it.
import { expect, test } from "vitest";
import { pooled, summarize } from "../../bench/lib/measure";

test("pooled rounds: latencies merged for the percentiles, throughput over the summed wall time", () => {
  const a = summarize("x", 16, [1, 2, 3, 4], 2_000); // 4 calls in 2 s
  const b = summarize("x", 16, [10, 20, 30, 40, 50, 60], 1_000); // 6 calls in 1 s
  expect(a.perSecond).toBe(2);
  const p = pooled([a, b]);
  expect(p).toMatchObject({ name: "x", concurrency: 16, count: 10, p50: 10, p99: 60, mean: 22 });
  // 10 calls in 3 s — not the mean of the rounds' rates (2/s and 6/s)
  expect(p.perSecond).toBeCloseTo(10 / 3, 10);
  // one round pools to itself
  expect(pooled([b])).toMatchObject({ count: 6, p50: 30, perSecond: 6 });
});

test("pooled refuses figures that did not come from a measure, and no rounds at all", () => {
  const made = { name: "x", concurrency: 1, count: 1, p50: 1, p99: 1, mean: 1, perSecond: 1 };
  expect(() => pooled([made])).toThrow(/every round must come from/);
  expect(() => pooled([])).toThrow(/every round must come from/);
});
