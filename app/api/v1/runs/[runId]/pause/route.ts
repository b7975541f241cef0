// POST /api/v1/runs/{runId}/pause — operator keys only; the tree's next gate call holds.
import { apiRoute } from "@/lib/api/route";
import { pauseRun } from "@/lib/modules/runs";
import { ReasonBody } from "@/lib/schemas/control";

export const POST = apiRoute({ body: ReasonBody }, async ({ principal, body, params }) => ({
  json: await pauseRun(principal, params.runId!, body.reason),
}));
