// POST /api/v1/approvals/{approvalId}/decision — approve or deny (the rule's role or named people, never the holder).
import { apiRoute } from "@/lib/api/route";
import { decideApproval } from "@/lib/modules/approvals";
import { DecideApprovalBody } from "@/lib/schemas/policy";

export const dynamic = "force-dynamic";

export const POST = apiRoute({ body: DecideApprovalBody }, async ({ principal, body, params }) => ({
  status: 200,
  json: await decideApproval(principal, params.approvalId ?? "", body),
}));
