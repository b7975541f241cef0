// POST /api/v1/operations — register queued / scheduled / retry work (idempotent on operationId).
import { apiRoute } from "@/lib/api/route";
import { registerOperation } from "@/lib/modules/runs";
import { RegisterOperationBody } from "@/lib/schemas/operations";
import { runOperations } from "@/lib/modules/gate";

export const POST = apiRoute({ body: RegisterOperationBody, quota: runOperations }, async ({ principal, body }) => {
  const r = await registerOperation(principal, body);
  return { status: r.created ? 201 : 200, json: r };
});
