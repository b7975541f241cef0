"use server";
// The policy from the console (admins; docs/approvals-console.md#policies): save a version from the editor's JSON,
// dry-run a version against past decisions, enable one (or none) with a reason. The dal authorizes, validates
// the document, numbers and audits the versions.
import { serverAction } from "@/lib/actions/run-action";
import { DryRunPolicyInput, EnablePolicyInput, SavePolicyInput } from "@/lib/schemas/console";
import { createPolicyVersion, dryRunPolicy, enablePolicy } from "@/lib/modules/policy";
import { badRequest, QuiesceError } from "@/lib/platform/errors";

/** The dal's 400 with the fields it names (zod issues in `details`), so the editor shows what to fix. */
function withIssues(err: unknown): never {
  if (err instanceof QuiesceError && err.code === "bad_request" && Array.isArray(err.details)) {
    const issues = (err.details as { path?: (string | number)[]; message?: string }[])
      .slice(0, 5)
      .map((i) => `${i.path?.length ? i.path.join(".") : "document"}: ${i.message ?? "invalid"}`);
    throw badRequest(`${err.message}: ${issues.join("; ")}`);
  }
  throw err;
}

export const savePolicyVersionAction = serverAction(
  { name: "save policy version", input: SavePolicyInput, action: "policy.write", revalidate: ["/policies"] },
  async ({ session, input }) => {
    let doc: unknown;
    try {
      doc = JSON.parse(input.document);
    } catch (err) {
      throw badRequest(`document: not JSON (${(err as Error).message})`);
    }
    const v = await createPolicyVersion(session.principal, doc).catch(withIssues);
    return { version: v.version };
  },
);

export const dryRunPolicyAction = serverAction(
  { name: "dry-run policy", input: DryRunPolicyInput, action: "policy.write" },
  async ({ session, input }) => dryRunPolicy(session.principal, input.version, { days: input.days }).catch(withIssues),
);

export const enablePolicyAction = serverAction(
  { name: "enable policy", input: EnablePolicyInput, action: "policy.write", revalidate: ["/policies", "/approvals"] },
  async ({ session, input }) => {
    const r = await enablePolicy(session.principal, input);
    return { enabledVersion: r.enabledVersion };
  },
);
