// POST /api/v1/operations/{operationId}/complete — outcome + effect (→ EffectReceipt); feeds the breaker.
import { apiRoute } from "@/lib/api/route";
import { completeOperation } from "@/lib/modules/runs";
import { CompleteBody } from "@/lib/schemas/operations";

export const POST = apiRoute({ body: CompleteBody }, async ({ principal, body, params }) => ({
  json: await completeOperation(principal, params.operationId!, body),
}));
