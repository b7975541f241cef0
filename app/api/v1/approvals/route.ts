// GET /api/v1/approvals — the team's approvals: open ones by default, soonest deadline first.
import { apiRoute } from "@/lib/api/route";
import { listApprovals } from "@/lib/modules/approvals";
import { ApprovalsQuery } from "@/lib/schemas/policy";

export const dynamic = "force-dynamic";

export const GET = apiRoute({ query: ApprovalsQuery }, async ({ principal, query }) => ({
  status: 200,
  json: { approvals: await listApprovals(principal, query) },
}));
