import { expect, test } from "vitest";
import fc from "fast-check";
import { acceptEpoch, bumpEpoch, childInitialEpoch, currentEpoch, isStaleEpoch, killTreeEpochs } from "./epoch";

const tree = fc.array(fc.record({ runId: fc.uuid(), epoch: fc.integer({ min: 1, max: 1000 }) }), { minLength: 1, maxLength: 20 });

test("a kill bumps every run of the tree by exactly one", () => {
  fc.assert(
    fc.property(tree, (runs) => {
      const after = killTreeEpochs(runs);
      after.forEach((r, i) => expect(r.epoch).toBe(runs[i]!.epoch + 1));
    }),
  );
});

test("epochs never decrease across any sequence of kills and accepted writes", () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: 100 }),
      fc.array(fc.oneof(fc.constant<"bump">("bump"), fc.integer({ min: 0, max: 200 })), { maxLength: 50 }),
      (start, steps) => {
        let e = start;
        for (const s of steps) {
          const next = s === "bump" ? bumpEpoch(e) : acceptEpoch(e, s);
          expect(next).toBeGreaterThanOrEqual(e);
          e = next;
        }
      },
    ),
  );
});

test("a stamp taken from currentEpoch is never stale; anything lower after a kill is", () => {
  fc.assert(
    fc.property(tree, (chain) => {
      const cur = currentEpoch(chain)!;
      expect(isStaleEpoch(cur, chain)).toBe(false);
      const killed = killTreeEpochs(chain);
      expect(isStaleEpoch(cur, killed)).toBe(true);
      expect(childInitialEpoch(chain)).toBe(cur);
    }),
  );
  expect(currentEpoch([])).toBeNull();
  expect(childInitialEpoch([])).toBe(1);
});
