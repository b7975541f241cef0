// GET /api/v1/runs/{runId}/control — what stops the run now: its own and its ancestors' lifecycles and the
// live fleet stops that match it or an ancestor (docs/environment.md#pause-resume-kill). Read by `quiesce exec`.
import { apiRoute } from "@/lib/api/route";
import { getRunControl } from "@/lib/modules/stop";

export const dynamic = "force-dynamic";

export const GET = apiRoute({}, async ({ principal, params }) => ({ json: await getRunControl(principal, params.runId ?? "") }));
