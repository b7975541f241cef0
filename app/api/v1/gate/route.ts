// POST /api/v1/gate — the hot path: the key is authenticated inside the gate's single SQL statement
// (auth: "hash"), so a decision costs one database round trip.
import { apiRoute } from "@/lib/api/route";
import { gateRefusal } from "@/lib/api/gate-outcome";
import { gateCheck } from "@/lib/modules/gate";
import { GateBody } from "@/lib/schemas/gate";
import { validTraceparent } from "@/lib/platform/telemetry/tracing";

export const POST = apiRoute({ body: GateBody, auth: "hash" }, async ({ keyHash, body, header }) => {
  // An agent's W3C traceparent links the gate span into its trace (ignored when tracing is off).
  const r = await gateCheck({ keyHash, ...body }, undefined, validTraceparent(header("traceparent")));
  if (!r.ok) throw gateRefusal(r);
  const { ok: _ok, ...answer } = r;
  return { json: answer };
});
