// The Policies page's one read (docs/approvals-console.md#policies): the policy, the newest versions each with its
// diff (the API's PolicyVersionView), spend against each budget, and who saved each version.
import "server-only";
import { getPolicy, listPolicyVersions } from "../policy";
import { listBudgets } from "../budgets";
import { peopleOf, type Person } from "../../members/console/people";
import type { Principal } from "../../../platform/auth/principal";
import type { BudgetView, PolicyVersionView } from "../../../schemas/policy";

/** Versions shown with their diffs; older ones stay readable through the API. */
export const CONSOLE_VERSIONS = 20;

export interface PolicyConsoleView {
  enabledVersion: number | null;
  versions: PolicyVersionView[];
  /** How many versions the team has in all (the list shows the newest CONSOLE_VERSIONS). */
  totalVersions: number;
  budgets: BudgetView[];
  people: Record<string, Person>;
}

export async function policyConsoleView(p: Principal): Promise<PolicyConsoleView> {
  const policy = await getPolicy(p);
  const [versions, budgets] = await Promise.all([listPolicyVersions(p, CONSOLE_VERSIONS), listBudgets(p)]);
  const people = await peopleOf(
    p,
    versions.map((v) => v.createdBy),
  );
  return {
    enabledVersion: policy.enabledVersion,
    versions,
    totalVersions: policy.versions.length,
    budgets,
    people: Object.fromEntries(people),
  };
}
