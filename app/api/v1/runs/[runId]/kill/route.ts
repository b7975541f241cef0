// POST /api/v1/runs/{runId}/kill — operator keys only. Writes the cancellation barrier transaction
// (docs/architecture.md#the-cancellation-barrier) and answers 202 with the barrier id: dispatch is stopped when this returns; the
// barrier engine settles in-flight work and issues the receipt. An open barrier is returned as is.
import { apiRoute } from "@/lib/api/route";
import { killRun } from "@/lib/modules/stop";
import { ReasonBody } from "@/lib/schemas/control";
import { validTraceparent } from "@/lib/platform/telemetry/tracing";

export const dynamic = "force-dynamic";

export const POST = apiRoute({ body: ReasonBody }, async ({ principal, body, params, header }) => {
  const r = await killRun(principal, params.runId ?? "", body.reason, validTraceparent(header("traceparent")));
  return { status: 202, json: { barrierId: r.barrierId, created: r.created } };
});
