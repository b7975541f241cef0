// GET /api/v1/policy/versions/{version} — one version with its diff against the one before it.
import { apiRoute } from "@/lib/api/route";
import { getPolicyVersion } from "@/lib/modules/policy";

export const dynamic = "force-dynamic";

export const GET = apiRoute({}, async ({ principal, params }) => ({
  status: 200,
  json: await getPolicyVersion(principal, params.version ?? ""),
}));
