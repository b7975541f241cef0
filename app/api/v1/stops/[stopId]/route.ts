// GET /api/v1/stops/{stopId} — a fleet stop's progress and, once issued, its fleet receipt
// (docs/fleet-stop.md). Moves an interrupted fan-out on first, so a crash loses nothing.
import { apiRoute } from "@/lib/api/route";
import { advanceStop, getStop } from "@/lib/dal/stops";

export const dynamic = "force-dynamic";

export const GET = apiRoute({}, async ({ principal, params }) => {
  await advanceStop(principal, params.stopId ?? "");
  return { status: 200, json: await getStop(principal, params.stopId ?? "") };
});
