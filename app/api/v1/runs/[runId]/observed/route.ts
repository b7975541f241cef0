// POST /api/v1/runs/{runId}/observed — a harness reports that its target observed the cancellation
// (signal_accepted | turn_interrupted | process_terminated), recorded on the run's barrier as the
// "observed by target" rung. Agent / worker / gateway keys.
import { apiRoute } from "@/lib/api/route";
import { recordObserved } from "@/lib/modules/stop";
import { ObservedBody } from "@/lib/schemas/barriers";
import { observedReports } from "@/lib/modules/gate";

export const dynamic = "force-dynamic";

export const POST = apiRoute({ body: ObservedBody, quota: observedReports }, async ({ principal, body, params }) => ({
  json: await recordObserved(principal, params.runId ?? "", body),
}));
