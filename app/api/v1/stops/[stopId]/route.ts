// GET /api/v1/stops/{stopId} — a fleet stop's progress and, once issued, its fleet receipt
// (docs/fleet-stop.md). Read-only: the barrier engine moves the fan-out on.
import { apiRoute } from "@/lib/api/route";
import { getStop } from "@/lib/modules/stop";

export const dynamic = "force-dynamic";

export const GET = apiRoute({}, async ({ principal, params }) => ({ status: 200, json: await getStop(principal, params.stopId ?? "") }));
