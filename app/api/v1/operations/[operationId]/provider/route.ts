// POST /api/v1/operations/{operationId}/provider — where a running operation's work is held (a remote task id).
import { apiRoute } from "@/lib/api/route";
import { recordOperationProvider } from "@/lib/modules/runs";
import { RecordProviderBody } from "@/lib/schemas/operations";

export const POST = apiRoute({ body: RecordProviderBody }, async ({ principal, body, params }) => ({
  json: await recordOperationProvider(principal, params.operationId!, body),
}));
