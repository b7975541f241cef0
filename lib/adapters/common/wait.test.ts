import { expect, test } from "vitest";
import { Doorbell } from "./wait";

test("a ring aborts the signal handed out before it and re-arms a fresh one", () => {
  const bell = new Doorbell();
  const before = bell.signal;
  expect(before.aborted).toBe(false);
  bell.ring();
  expect(before.aborted).toBe(true);
  expect(bell.signal.aborted).toBe(false);
  expect(bell.signal).not.toBe(before);
});
