// POST /api/v1/runs/{runId}/environment/resolve — the owner of an unknown environment (or a manager/admin)
// records that they checked the machine and the run's process tree is gone (docs/evidence.md#the-environment).
import { apiRoute } from "@/lib/api/route";
import { resolveEnvironment } from "@/lib/modules/stop";
import { ResolveEnvironmentBody } from "@/lib/schemas/runs";

export const dynamic = "force-dynamic";

export const POST = apiRoute({ body: ResolveEnvironmentBody }, async ({ principal, body, params }) => ({
  json: await resolveEnvironment(principal, params.runId ?? "", { evidence: body.evidence }),
}));
