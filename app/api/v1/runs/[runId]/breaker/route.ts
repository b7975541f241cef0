// POST /api/v1/runs/{runId}/breaker — { action: trip|reset, reason }; operator keys only.
import { apiRoute } from "@/lib/api/route";
import { setBreaker } from "@/lib/modules/gate";
import { BreakerBody } from "@/lib/schemas/control";

export const POST = apiRoute({ body: BreakerBody }, async ({ principal, body, params }) => ({
  json: await setBreaker(principal, params.runId!, body.action, body.reason),
}));
