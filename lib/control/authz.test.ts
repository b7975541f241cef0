import { describe, expect, test } from "vitest";
import fc from "fast-check";
import { ACTIONS, isAllowed, isControlWrite, type Caller } from "./authz";
import { KEY_KINDS, MACHINE_KINDS, ROLES } from "./types";

describe("authorization", () => {
  test("no machine key can write control state, whatever its scopes", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...MACHINE_KINDS),
        fc.array(fc.constantFrom("*", ...ACTIONS)),
        fc.constantFrom(...ACTIONS.filter(isControlWrite)),
        (kind, scopes, action) => !isAllowed({ type: "key", kind, role: null, scopes }, action),
      ),
    );
  });

  test("a viewer cannot pause, kill or trip; an operator can", () => {
    for (const a of ["run.pause", "run.kill", "breaker.trip"] as const) {
      expect(isAllowed({ type: "user", role: "viewer" }, a)).toBe(false);
      expect(isAllowed({ type: "user", role: "operator" }, a)).toBe(true);
    }
  });

  test("an operator key has exactly its user's current role, narrowed by scopes", () => {
    fc.assert(
      fc.property(fc.constantFrom(...ROLES), fc.constantFrom(...ACTIONS), (role, action) => {
        const key: Caller = { type: "key", kind: "operator", role, scopes: [] };
        return isAllowed(key, action) === isAllowed({ type: "user", role }, action);
      }),
    );
    expect(isAllowed({ type: "key", kind: "operator", role: null, scopes: [] }, "run.read")).toBe(false);
    expect(isAllowed({ type: "key", kind: "operator", role: "admin", scopes: ["run.read"] }, "run.kill")).toBe(false);
  });

  test("scopes never widen a key", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...KEY_KINDS),
        fc.constantFrom(...ROLES),
        fc.array(fc.constantFrom("*", ...ACTIONS)),
        fc.constantFrom(...ACTIONS),
        (kind, role, scopes, action) => {
          const narrowed = isAllowed({ type: "key", kind, role, scopes }, action);
          const wide = isAllowed({ type: "key", kind, role, scopes: [] }, action);
          return !narrowed || wide;
        },
      ),
    );
  });
  test("the role table, whole: each role's actions, written out", () => {
    // Written out on purpose (not derived from the table under test): a change to who may do what must
    // change this list too, in review.
    // approval.decide: the approval's own rule narrows it to its role or the people it names
    const viewer = ["run.read", "reconciliation.resolve", "approval.decide", "provider.read"];
    const operator = [...viewer, "run.pause", "run.resume", "run.kill", "fleet.stop", "breaker.trip", "breaker.reset", "audit.read"];
    const expected: Record<(typeof ROLES)[number], string[]> = {
      viewer,
      operator,
      manager: [...operator, "reconciliation.assign"],
      admin: [...ACTIONS],
    };
    for (const role of ROLES) {
      const granted = ACTIONS.filter((a) => isAllowed({ type: "user", role }, a));
      expect([...granted].sort(), role).toEqual([...expected[role]].sort());
    }
  });
});
