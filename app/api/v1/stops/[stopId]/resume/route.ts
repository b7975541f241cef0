// POST /api/v1/stops/{stopId}/resume — lift a pause scope (docs/fleet-stop.md); a kill scope answers 409.
import { apiRoute } from "@/lib/api/route";
import { resumeStop } from "@/lib/modules/stop";
import { ReasonBody } from "@/lib/schemas/control";

export const dynamic = "force-dynamic";

export const POST = apiRoute({ body: ReasonBody }, async ({ principal, body, params }) => ({
  status: 200,
  json: await resumeStop(principal, params.stopId ?? "", body.reason),
}));
