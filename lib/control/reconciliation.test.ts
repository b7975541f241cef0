import fc from "fast-check";
import { expect, test } from "vitest";
import { isOpenReconciliation, mayResolveReconciliation, RECONCILIATION_STATUSES } from "./reconciliation";
import { ROLES } from "./types";

test("open means not resolved", () => {
  for (const s of RECONCILIATION_STATUSES) expect(isOpenReconciliation(s)).toBe(s !== "resolved");
});

test("the assignee or a manager/admin may resolve; nobody else, and nobody when unassigned unless a manager", () => {
  fc.assert(
    fc.property(
      fc.constantFrom(...ROLES, null),
      fc.option(fc.constantFrom("u1", "u2")),
      fc.option(fc.constantFrom("u1", "u2")),
      (role, userId, assignee) => {
        const may = mayResolveReconciliation({ role, userId }, assignee);
        const expected = role === "manager" || role === "admin" || (assignee !== null && userId === assignee);
        return may === expected;
      },
    ),
  );
  expect(mayResolveReconciliation({ role: "operator", userId: "u1" }, null)).toBe(false);
});
