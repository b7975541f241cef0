// POST /api/v1/recoveries/{recoveryId}/assign — a manager hands the item to a member (docs/evidence.md#recovery).
import { apiRoute } from "@/lib/api/route";
import { assignRecovery } from "@/lib/modules/stop";
import { AssignRecoveryBody } from "@/lib/schemas/recovery";

export const dynamic = "force-dynamic";

export const POST = apiRoute({ body: AssignRecoveryBody }, async ({ principal, body, params }) => ({
  status: 200,
  json: await assignRecovery(principal, params.recoveryId ?? "", body.assigneeUserId),
}));
