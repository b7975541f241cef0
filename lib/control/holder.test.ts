import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { holds, type HoldingFacts } from "./holder";

const ids = fc.uniqueArray(fc.stringMatching(/^r[0-9a-f]{3}$/), { minLength: 1, maxLength: 5 });
const key = fc.constantFrom("kA", "kB", "kC");

describe("holds", () => {
  it("a key holds the work exactly when it registered the operation, a run of the path, or presents a lease of one", () => {
    fc.assert(
      fc.property(
        ids,
        fc.array(fc.option(key, { nil: null }), { minLength: 5, maxLength: 5 }),
        key,
        fc.option(key, { nil: null }),
        fc.option(fc.stringMatching(/^r[0-9a-f]{3}$/), { nil: null }),
        (path, hs, caller, opKey, leaseRun) => {
          const holders = new Map(path.map((id, i) => [id, hs[i] ?? null]));
          const f: HoldingFacts = { path, holders, operationKey: opKey, presentedLeaseRun: leaseRun };
          const expected =
            opKey === caller || path.some((id) => holders.get(id) === caller) || (leaseRun !== null && path.includes(leaseRun));
          expect(holds({ type: "key", keyId: caller }, f)).toBe(expected);
        },
      ),
    );
  });

  it("same team is not enough: another key with no lease never holds", () => {
    fc.assert(
      fc.property(ids, (path) => {
        const holders = new Map(path.map((id) => [id, "kA"]));
        expect(holds({ type: "key", keyId: "kB" }, { path, holders, operationKey: "kA", presentedLeaseRun: null })).toBe(false);
      }),
    );
  });

  it("a lease of a run outside the path (a sibling or a child) holds nothing here", () => {
    expect(holds({ type: "key", keyId: "kB" }, { path: ["r1", "r2"], holders: new Map(), presentedLeaseRun: "r3" })).toBe(false);
    expect(holds({ type: "key", keyId: "kB" }, { path: ["r1", "r2"], holders: new Map(), presentedLeaseRun: "r1" })).toBe(true);
  });

  it("people never hold work; the system always does", () => {
    const f: HoldingFacts = { path: ["r1"], holders: new Map([["r1", null]]), operationKey: null, presentedLeaseRun: "r1" };
    expect(holds({ type: "user" }, f)).toBe(false);
    expect(holds({ type: "system" }, f)).toBe(true);
  });
});
