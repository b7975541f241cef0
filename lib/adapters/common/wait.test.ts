import fc from "fast-check";
import { expect, test } from "vitest";
import { AbortedError, backoffDelay, Doorbell, sleep } from "./wait";

test("backoff never shrinks and never passes its cap", () => {
  fc.assert(fc.property(fc.nat(1000), fc.integer({ min: 1, max: 60_000 }), (a, cap) => {
    expect(backoffDelay(a + 1, cap)).toBeGreaterThanOrEqual(backoffDelay(a, cap));
    expect(backoffDelay(a, cap)).toBeLessThanOrEqual(cap);
  }));
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
