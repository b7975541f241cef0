// POST /api/v1/operations/{operationId}/heartbeat — continue=false means stop now.
import { apiRoute } from "@/lib/api/route";
import { gateRefusal } from "@/lib/api/gate-outcome";
import { heartbeatCheck } from "@/lib/modules/gate";
import { HeartbeatBody } from "@/lib/schemas/operations";

export const POST = apiRoute({ body: HeartbeatBody, auth: "hash" }, async ({ keyHash, body, params }) => {
  const r = await heartbeatCheck({ keyHash, operationId: params.operationId!, leaseId: body.leaseId });
  if (!r.ok) throw gateRefusal(r);
  const { ok: _ok, ...answer } = r;
  return { json: answer };
});
