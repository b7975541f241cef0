import fc from "fast-check";
import { expect, test } from "vitest";
import {
  compensationVerdict,
  FINAL_RECOVERY_STATES,
  isUnsettledRecovery,
  mayMove,
  RECOVERY_STATES,
  recoveryOwnerLabel,
  recoverySentence,
  restartBlockers,
  type RecoveryFact,
} from "./recovery";

const state = fc.constantFrom(...RECOVERY_STATES);
const iso = fc.integer({ min: 0, max: 10_000 }).map((s) => new Date(Date.UTC(2026, 11, 6, 0, 0, s)).toISOString());

test("a final state is never left, and every state is final or unsettled", () => {
  fc.assert(
    fc.property(state, state, (from, to) => {
      if ((FINAL_RECOVERY_STATES as readonly string[]).includes(from)) return !mayMove(from, to);
      return true;
    }),
  );
  for (const s of RECOVERY_STATES) expect(isUnsettledRecovery(s)).toBe(!(FINAL_RECOVERY_STATES as readonly string[]).includes(s));
  expect(mayMove("open", "rolled_back")).toBe(true);
  expect(mayMove("failed", "in_progress")).toBe(true);
  expect(mayMove("rolled_back", "open")).toBe(false);
});

test("an item always opens with an owner when any is named, the effect's first", () => {
  expect(recoveryOwnerLabel("release-oncall", "deploy-team", "ana")).toBe("release-oncall");
  expect(recoveryOwnerLabel(null, "deploy-team", "ana")).toBe("deploy-team");
  expect(recoveryOwnerLabel(null, null, "ana")).toBe("ana");
  expect(recoveryOwnerLabel("", null, null)).toBeNull();
});

test("rolled back only on a later check that answered absent; present after the ask is failed", () => {
  fc.assert(
    fc.property(
      iso,
      fc.option(fc.record({ effect: fc.constantFrom("present", "absent", "unavailable" as const), checkedAt: iso })),
      (asked, check) => {
        const v = compensationVerdict(asked, check);
        if (v === "rolled_back") return check !== null && check.effect === "absent" && check.checkedAt >= asked;
        if (v === "failed") return check !== null && check.effect === "present" && check.checkedAt >= asked;
        return check === null || check.effect === "unavailable" || check.checkedAt < asked;
      },
    ),
  );
});

const fact = fc.record({
  operationId: fc.constantFrom("op-a", "op-b", "op-c"),
  state,
  settledBy: fc.constantFrom("provider", "person", null),
  providerName: fc.constantFrom("deploy-sim", null),
  by: fc.constantFrom("Ana Ruiz <ana@example.com>", null),
  at: fc.option(iso),
}) as fc.Arbitrary<RecoveryFact>;

test("restart is blocked exactly by a receipt that is not quiet or an item still owed", () => {
  fc.assert(
    fc.property(fc.constantFrom("stopped_and_quiet", "stop_incomplete", null), fc.array(fact, { maxLength: 5 }), (decision, items) => {
      const blockers = restartBlockers(decision, items);
      const expected = (decision !== "stopped_and_quiet" ? 1 : 0) + items.filter((i) => isUnsettledRecovery(i.state)).length;
      return blockers.length === expected;
    }),
  );
});

test("the recovery sentence counts every item once and names who proved each rollback", () => {
  fc.assert(
    fc.property(fc.array(fact, { minLength: 1, maxLength: 6 }), (items) => {
      const s = recoverySentence(items)!;
      const counted = [...s.matchAll(/(\d+) (rolled back|accepted|open|in progress|failed)/g)].reduce((n, m) => n + Number(m[1]), 0);
      return s.startsWith(`${items.length} effect`) && counted === items.length;
    }),
  );
  expect(recoverySentence([])).toBeNull();
  expect(
    recoverySentence([
      {
        operationId: "op-a",
        state: "rolled_back",
        settledBy: "provider",
        providerName: "deploy-sim",
        by: null,
        at: "2026-12-06T01:00:00.000Z",
      },
      {
        operationId: "op-b",
        state: "accepted",
        settledBy: "person",
        providerName: null,
        by: "Ana Ruiz <ana@example.com>",
        at: "2026-12-06T01:05:00.000Z",
      },
    ]),
  ).toBe(
    "2 effects completed before the stop: 1 rolled back (verified by deploy-sim at 2026-12-06T01:00:00.000Z), 1 accepted by Ana Ruiz <ana@example.com> at 2026-12-06T01:05:00.000Z.",
  );
});
