// GET /api/v1/approvals/{approvalId} — one approval.
import { apiRoute } from "@/lib/api/route";
import { getApproval } from "@/lib/modules/approvals";

export const dynamic = "force-dynamic";

export const GET = apiRoute({}, async ({ principal, params }) => ({
  status: 200,
  json: await getApproval(principal, params.approvalId ?? ""),
}));
