// POST /api/v1/stops — fleet stop (docs/fleet-stop.md). dryRun: the matched count and a sample, nothing
// written (200). Otherwise the scope commits — dispatch is stopped for every matching run, and for
// matching runs created later, when this returns — and a kill fans out one barrier per matching tree (202).
import { apiRoute } from "@/lib/api/route";
import { createStop, previewStop } from "@/lib/modules/stop";
import { CreateStopBody } from "@/lib/schemas/stops";

export const dynamic = "force-dynamic";

export const POST = apiRoute({ body: CreateStopBody }, async ({ principal, body }) => {
  if (body.dryRun) return { status: 200, json: await previewStop(principal, body) };
  return { status: 202, json: await createStop(principal, body) };
});
