"use server";
// Answering an approval from its card (docs/approvals-console.md). The dal (lib/modules/approvals) checks the team,
// who may answer (the rule's role or named people, never the run's holder) and that the card is still pending,
// under the approval's row lock, and audits the answer.
import { serverAction } from "@/lib/actions/run-action";
import { DecideApprovalInput } from "@/lib/schemas/console";
import { decideApproval } from "@/lib/modules/approvals";

export const decideApprovalAction = serverAction(
  { name: "decide approval", input: DecideApprovalInput, action: "approval.decide", revalidate: ["/approvals"] },
  async ({ session, input }) => {
    const a = await decideApproval(session.principal, input.approvalId, { decision: input.decision, note: input.note });
    return { approvalId: a.id, state: a.state as string };
  },
);
