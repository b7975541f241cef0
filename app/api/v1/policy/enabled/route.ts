// PUT /api/v1/policy/enabled — enable a version (or none, with null); audited with the diff.
import { apiRoute } from "@/lib/api/route";
import { enablePolicy } from "@/lib/modules/policy";
import { EnablePolicyBody } from "@/lib/schemas/policy";

export const dynamic = "force-dynamic";

export const PUT = apiRoute({ body: EnablePolicyBody }, async ({ principal, body }) => ({
  status: 200,
  json: await enablePolicy(principal, body),
}));
