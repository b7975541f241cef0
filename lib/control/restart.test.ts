import fc from "fast-check";
import { expect, test } from "vitest";
import { ledgerAnswer, replayedOperationId, type LedgerEntry } from "./restart";
import { OPERATION_STATES } from "./types";

const entry = fc.record({
  operationId: fc.string({ minLength: 1, maxLength: 40 }),
  runId: fc.constant("run_old"),
  tool: fc.constant("deployment.reserve_preview"),
  state: fc.constantFrom(...OPERATION_STATES),
  outcome: fc.constantFrom("already_applied", "free_to_run", "unsettled" as const),
  effectReceipt: fc.constant(null),
}) as fc.Arbitrary<LedgerEntry>;

test("completed is never repeated, never-ran runs again under its own stable id, anything else is denied", () => {
  fc.assert(
    fc.property(entry, (e) => {
      const a = ledgerAnswer(e, "run_new");
      if (e.outcome === "free_to_run") return "operationId" in a && a.operationId === replayedOperationId(e.operationId, "run_new");
      if (!("local" in a) || a.local.decision !== "deny") return false;
      return e.outcome === "already_applied"
        ? a.local.reason === "already_applied" && a.local.operation?.operationId === e.operationId
        : a.local.reason === "missing_state";
    }),
  );
  expect(replayedOperationId("op-1", "run_b")).toBe(replayedOperationId("op-1", "run_b"));
  expect(replayedOperationId("op-1", "run_b")).not.toBe(replayedOperationId("op-1", "run_c"));
});
