// POST /api/v1/recoveries/{recoveryId}/record — what a person did about the effect, with a note and evidence
// (docs/evidence.md#recovery); the receipt says a person did.
import { apiRoute } from "@/lib/api/route";
import { recordRecovery } from "@/lib/modules/stop";
import { RecordRecoveryBody } from "@/lib/schemas/recovery";

export const dynamic = "force-dynamic";

export const POST = apiRoute({ body: RecordRecoveryBody }, async ({ principal, body, params }) => ({
  status: 200,
  json: await recordRecovery(principal, params.recoveryId ?? "", body),
}));
