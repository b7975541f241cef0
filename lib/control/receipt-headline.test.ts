import { describe, expect, it } from "vitest";
import { receiptHeadline } from "./receipt-headline";

const name = (a: string) => (a === "user:user_ana" ? "Ana Ruiz <ana@example.com>" : a);

describe("receiptHeadline", () => {
  it("says a quiet stop in one sentence from the body's own items", () => {
    const body = {
      in_flight: [
        { operation_id: "op_1", tool: "deploy", provider: "deploy-sim", settled_by: "provider" },
        { operation_id: "op_2", tool: "deploy", provider: "deploy-sim", settled_by: "provider" },
        { operation_id: "op_3", tool: "deploy", provider: "deploy-sim", settled_by: "provider" },
      ],
      work: { queued_cancelled: 1 },
      reconciliation: [],
    };
    expect(receiptHeadline("stopped_and_quiet", body, name)).toBe(
      "Stopped and quiet: 3 calls settled by deploy-sim, 1 cancelled before it started.",
    );
    expect(receiptHeadline("stopped_and_quiet", { in_flight: [], work: {} }, name)).toBe("Stopped and quiet: nothing was in flight.");
  });

  it("names the open outcome, its tool and its owner by name when not quiet", () => {
    const body = {
      in_flight: [{ operation_id: "op_9", tool: "deployment.reserve_preview", provider: "deploy-sim", settled_by: null }],
      reconciliation: [{ operation_id: "op_9", assignee: "user:user_ana", status: "assigned" }],
    };
    expect(receiptHeadline("stop_incomplete", body, name)).toBe(
      "Not yet quiet: 1 outcome unknown — `deployment.reserve_preview` op_9, owned by Ana Ruiz <ana@example.com>.",
    );
  });
});
