import "server-only";

export { createPolicyVersion, dryRunPolicy, enablePolicy, getPolicy, getPolicyVersion, listPolicyVersions, rulesOf } from "./policy";
export { listBudgets } from "./budgets";
export { policyConsoleView, CONSOLE_VERSIONS, type PolicyConsoleView } from "./console/view";
