// POST /api/v1/policy/versions/{version}/dry-run — what the version would have done to recent allowed calls.
import { apiRoute } from "@/lib/api/route";
import { dryRunPolicy } from "@/lib/modules/policy";
import { DryRunBody } from "@/lib/schemas/policy";

export const dynamic = "force-dynamic";

export const POST = apiRoute({ body: DryRunBody }, async ({ principal, body, params }) => ({
  status: 200,
  json: await dryRunPolicy(principal, params.version ?? "", body),
}));
