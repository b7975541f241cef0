// How the gateway answers a tools/call it will not (or could not) complete. A refusal is a tool
// result with isError: true — the MCP way of reporting a tool failure to the model, so the agent
// reads why — never a protocol error that a client might retry blindly. The gate's decision rides
// along in _meta for programs.
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { answerText, reasonText } from "../common/control";

export const META_KEY = "dev.quiesce/gate";

export interface Refusal {
  tool: string;
  operationId: string;
  runId?: string;
  decision: "deny" | "aborted";
  reason: string;
  detail?: string;
  /** The approval or the budget the gate's answer is about. */
  approvalId?: string;
  budget?: string;
}

export function refusalResult(r: Refusal): CallToolResult {
  const text =
    r.decision === "aborted"
      ? `Quiesce aborted ${r.tool}: ${reasonText(r.reason)}. The call was cancelled upstream; its outcome is UNKNOWN (recorded for reconciliation).`
      : `Quiesce denied ${r.tool}: ${answerText(r)}${r.detail ? ` (${r.detail})` : ""}.`;
  return {
    content: [{ type: "text", text }],
    isError: true,
    _meta: {
      [META_KEY]: {
        decision: r.decision,
        reason: r.reason,
        operationId: r.operationId,
        runId: r.runId ?? null,
        ...(r.approvalId ? { approvalId: r.approvalId } : {}),
        ...(r.budget ? { budget: r.budget } : {}),
      },
    },
  };
}
