// POST /api/v1/recoveries/{recoveryId}/start — ask the provider to undo the effect, then verify it is absent
// (docs/evidence.md#recovery). Answers with the item: rolled_back, failed, or still in_progress.
import { apiRoute } from "@/lib/api/route";
import { startRecovery } from "@/lib/modules/stop";
import { EmptyBody } from "@/lib/schemas/common";

export const dynamic = "force-dynamic";

export const POST = apiRoute({ body: EmptyBody }, async ({ principal, params }) => ({
  status: 200,
  json: await startRecovery(principal, params.recoveryId ?? ""),
}));
