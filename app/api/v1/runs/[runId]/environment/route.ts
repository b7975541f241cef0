// POST /api/v1/runs/{runId}/environment — a supervisor (`quiesce exec`) marks its run supervised before the
// command starts, then reports its container's live status (docs/environment.md). The run's holder only.
import { apiRoute } from "@/lib/api/route";
import { reportEnvironment } from "@/lib/modules/runs";
import { EnvironmentReportBody } from "@/lib/schemas/runs";
import { observedReports } from "@/lib/modules/gate";

export const dynamic = "force-dynamic";

export const POST = apiRoute({ body: EnvironmentReportBody, quota: observedReports }, async ({ principal, body, params }) => ({
  json: await reportEnvironment(principal, params.runId ?? "", body),
}));
