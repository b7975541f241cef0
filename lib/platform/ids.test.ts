import { describe, expect, it } from "vitest";
import { newId } from "./ids";

describe("newId", () => {
  it("gives the documented form: a prefix and 16 base64url characters (12 random bytes)", () => {
    expect(newId("op")).toMatch(/^op_[A-Za-z0-9_-]{16}$/);
    expect(newId("rcpt")).toMatch(/^rcpt_[A-Za-z0-9_-]{16}$/);
  });

  it("never hands out the same bytes twice, across many refills of its random page", () => {
    // 100 000 ids span ~290 pages of random bytes; a page reused or an offset not advanced shows as a repeat.
    const seen = new Set<string>();
    for (let i = 0; i < 100_000; i++) seen.add(newId("op").slice(3));
    expect(seen.size).toBe(100_000);
  });

  it("spreads its bits: every base64url character occurs at every position", () => {
    const at = Array.from({ length: 16 }, () => new Set<string>());
    for (let i = 0; i < 20_000; i++) [...newId("op").slice(3)].forEach((c, j) => at[j]!.add(c));
    // 12 bytes = 96 bits = exactly 16 characters of 6 bits: all 64 symbols appear at each position.
    for (const s of at) expect(s.size).toBe(64);
  });
});
