// POST /api/v1/runs/{runId}/restart — a killed root starts again on settled ground (docs/evidence.md#restart);
// 409 names what blocks it.
import { apiRoute } from "@/lib/api/route";
import { restartRun } from "@/lib/modules/stop";
import { ReasonBody } from "@/lib/schemas/control";

export const dynamic = "force-dynamic";

export const POST = apiRoute({ body: ReasonBody }, async ({ principal, body, params }) => ({
  status: 201,
  json: await restartRun(principal, params.runId ?? "", body.reason),
}));
