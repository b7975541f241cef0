// POST /api/v1/runs/{runId}/resume — operator keys only; a killed run answers 409.
import { apiRoute } from "@/lib/api/route";
import { resumeRun } from "@/lib/modules/runs";
import { ReasonBody } from "@/lib/schemas/control";

export const POST = apiRoute({ body: ReasonBody }, async ({ principal, body, params }) => ({
  json: await resumeRun(principal, params.runId!, body.reason),
}));
