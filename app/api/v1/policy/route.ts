// GET /api/v1/policy — the team's enabled policy version and the list of versions (docs/policies.md).
import { apiRoute } from "@/lib/api/route";
import { getPolicy } from "@/lib/modules/policy";

export const dynamic = "force-dynamic";

export const GET = apiRoute({}, async ({ principal }) => ({ status: 200, json: await getPolicy(principal) }));
