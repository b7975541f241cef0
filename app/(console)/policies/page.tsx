// Policies (docs/approvals-console.md#policies): the enabled version, budgets' spend, versions with diffs; admins edit.
import { requireSession } from "@/lib/modules/sessions";
import { policyConsoleView } from "@/lib/modules/policy";
import { isAllowed } from "@/lib/control/authz";
import { PoliciesView } from "@/components/policies-view";

export const metadata = { title: "Policies" };

export default async function PoliciesPage() {
  const s = await requireSession();
  const initial = await policyConsoleView(s.principal);
  return <PoliciesView initial={initial} isAdmin={isAllowed({ type: "user", role: s.principal.role }, "policy.write")} />;
}
