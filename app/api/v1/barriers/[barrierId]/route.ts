// GET /api/v1/barriers/{barrierId} — phase, the stop ladder rung by rung, counts, settlements and
// receipt versions (docs/architecture.md#, #the-wire-contract).
import { apiRoute } from "@/lib/api/route";
import { getBarrierView } from "@/lib/modules/stop";

export const dynamic = "force-dynamic";

export const GET = apiRoute({}, async ({ principal, params }) => ({
  json: await getBarrierView(principal, params.barrierId ?? ""),
}));
