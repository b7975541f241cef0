// POST /api/v1/operations/{operationId}/admit — dequeue-time gate check (one round trip).
import { apiRoute } from "@/lib/api/route";
import { gateRefusal } from "@/lib/api/gate-outcome";
import { admitCheck } from "@/lib/modules/gate";
import { AdmitBody } from "@/lib/schemas/operations";
import { validTraceparent } from "@/lib/platform/telemetry/tracing";

export const POST = apiRoute({ body: AdmitBody, auth: "hash" }, async ({ keyHash, body, params, header }) => {
  const r = await admitCheck(
    { keyHash, operationId: params.operationId!, leaseId: body.leaseId },
    undefined,
    validTraceparent(header("traceparent")),
  );
  if (!r.ok) throw gateRefusal(r);
  const { ok: _ok, ...answer } = r;
  return { json: answer };
});
