// The version-chain rule, property-tested: an unbroken chain passes; removing, duplicating or
// re-pointing any link is reported as a chain failure.
import fc from "fast-check";
import { expect, test } from "vitest";
import { checkChain, type VerifiedReceipt } from "./verify-receipts";

const chain = (n: number, barrierId = "stop_1"): VerifiedReceipt[] =>
  Array.from({ length: n }, (_, i) => ({
    source: `v${i + 1}`,
    barrierId,
    version: i + 1,
    digest: `d${i + 1}`,
    previousDigest: i ? `d${i}` : null,
    keyId: "k",
  }));

test("chains", () => {
  fc.assert(
    fc.property(fc.integer({ min: 1, max: 12 }), fc.nat(), fc.integer({ min: 0, max: 3 }), (n, pick, how) => {
      const c = chain(n);
      expect(checkChain(fc.sample(fc.shuffledSubarray(c, { minLength: n, maxLength: n }), 1)[0]!)).toEqual([]);
      if (n < 3 && how === 0) return;
      const broken = [...c];
      const i = pick % n;
      if (how === 0)
        broken.splice(Math.max(1, Math.min(i, n - 2)), 1); // a middle version missing
      else if (how === 1)
        broken.push({ ...c[i]!, digest: "other" }); // two receipts claim one version
      else if (how === 2) {
        if (n < 2) return;
        const j = Math.max(1, i);
        broken[j] = { ...c[j]!, previousDigest: "forged" };
      } else broken[i] = { ...c[i]!, barrierId: "stop_2" };
      if (how === 3 && n === 1) return;
      const f = checkChain(broken);
      expect(f.length).toBeGreaterThan(0);
      expect(f.every((x) => x.kind === "chain")).toBe(true);
    }),
    { numRuns: 200 },
  );
  expect(checkChain([{ ...chain(1)[0]!, previousDigest: "x" }])).toMatchObject([{ kind: "chain" }]);
});
