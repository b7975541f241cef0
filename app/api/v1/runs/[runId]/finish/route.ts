// POST /api/v1/runs/{runId}/finish — the harness says the run ended (docs/fleet-stop.md#run-completion).
import { apiRoute } from "@/lib/api/route";
import { finishRun } from "@/lib/modules/runs";
import { FinishRunBody } from "@/lib/schemas/stops";

export const dynamic = "force-dynamic";

export const POST = apiRoute({ body: FinishRunBody }, async ({ principal, body, params }) => ({
  status: 200,
  json: await finishRun(principal, params.runId ?? "", body),
}));
