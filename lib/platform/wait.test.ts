import fc from "fast-check";
import { expect, test } from "vitest";
import { AbortedError, backoffDelay, Doorbell, forEachBounded, sleep } from "./wait";

test("backoff never shrinks and never passes its cap", () => {
  fc.assert(
    fc.property(fc.nat(1000), fc.integer({ min: 1, max: 60_000 }), (a, cap) => {
      expect(backoffDelay(a + 1, { capMs: cap })).toBeGreaterThanOrEqual(backoffDelay(a, { capMs: cap }));
      expect(backoffDelay(a, { capMs: cap })).toBeLessThanOrEqual(cap);
    }),
  );
});

test("a wait ends early on the doorbell and fails on the caller's abort", async () => {
  const bell = new Doorbell();
  const woken = sleep(3_600_000, undefined, bell.signal);
  bell.ring();
  await expect(woken).resolves.toBeUndefined();
  const ctrl = new AbortController();
  const cut = sleep(3_600_000, ctrl.signal, bell.signal);
  ctrl.abort();
  await expect(cut).rejects.toBeInstanceOf(AbortedError);
});

test("an aborted signal rejects at once; a quiet wait on an aborted wake returns at once", async () => {
  await expect(sleep(3_600_000, AbortSignal.abort())).rejects.toBeInstanceOf(AbortedError);
  await expect(sleep(3_600_000, undefined, AbortSignal.abort())).resolves.toBeUndefined();
});

test("backoff starts at its base", () => {
  expect(backoffDelay(0, { baseMs: 100, capMs: 5000 })).toBe(100);
  expect(backoffDelay(3, { baseMs: 100, capMs: 5000 })).toBe(800);
  expect(backoffDelay(10, { baseMs: 100, capMs: 5000 })).toBe(5000);
});

test("forEachBounded: every item once, never more than the limit in flight", async () => {
  let inFlight = 0;
  let most = 0;
  const seen: number[] = [];
  await forEachBounded([1, 2, 3, 4, 5, 6, 7], 3, async (x) => {
    inFlight++;
    most = Math.max(most, inFlight);
    await sleep(x % 3);
    seen.push(x);
    inFlight--;
  });
  expect(seen.sort()).toEqual([1, 2, 3, 4, 5, 6, 7]);
  expect(most).toBe(3);
});
