// POST /api/v1/policy/versions — save a new version (admins); it is enabled separately, after a dry run.
import { apiRoute } from "@/lib/api/route";
import { createPolicyVersion } from "@/lib/modules/policy";
import { PolicyDocument } from "@/lib/schemas/policy";

export const dynamic = "force-dynamic";

export const POST = apiRoute({ body: PolicyDocument }, async ({ principal, body }) => ({
  status: 201,
  json: await createPolicyVersion(principal, body),
}));
