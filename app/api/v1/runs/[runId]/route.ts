// GET /api/v1/runs/{runId} — the run with its children and leases; another team's run is 404.
import { apiRoute } from "@/lib/api/route";
import { getRunView } from "@/lib/modules/runs";

export const GET = apiRoute({}, async ({ principal, params }) => ({ json: await getRunView(principal, params.runId!) }));
