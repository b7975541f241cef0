// Policy, approvals and budgets (docs/policies.md): the team's versioned rules, the approvals the gate asks
// people for, and spend against each budget.
import { z } from "zod";
import { HARNESSES } from "../control/types";
import {
  APPROVAL_STATES,
  APPROVER_ROLES,
  BUDGET_ON_CROSS,
  BUDGET_SCOPES,
  BUDGET_WINDOWS,
  DEFAULT_APPROVAL_TTL_SECONDS,
  POLICY_EFFECTS,
} from "../control/policy";
import { Id, IsoTime, PG_INT_MAX, requestShape, responseShape } from "./common";
import { BudgetUnit } from "./gate";
import { registerPath } from "./registry";

const RuleName = z.string().regex(/^[a-z0-9][a-z0-9_.-]{0,59}$/, "a rule name is lowercase letters, digits, _ . - (at most 60)");

export const PolicyRuleInput = z
  .strictObject({
    name: RuleName,
    /** Glob over the tool name: `*` any run of characters, `?` one character. Absent: every tool. */
    tool: z.string().trim().min(1).max(300).optional(),
    harness: z.enum(HARNESSES).optional(),
    /** The run's native agent id or its creator (as a fleet stop's agent filter). */
    agent: z.string().trim().min(1).max(200).optional(),
    /** A run id: the rule covers that run and everything below it. */
    subtree: Id.optional(),
    effect: z.enum(POLICY_EFFECTS),
    approval: z
      .strictObject({
        ttlSeconds: z.number().int().min(10).max(86_400).default(DEFAULT_APPROVAL_TTL_SECONDS),
        role: z.enum(APPROVER_ROLES).default("operator"),
        /** Named people (emails of team members) who may approve, besides the role. */
        users: z.array(z.email()).max(20).default([]),
      })
      .optional(),
    budget: z
      .strictObject({
        unit: BudgetUnit,
        limit: z.number().finite().nonnegative().max(1e12),
        window: z.enum(BUDGET_WINDOWS).default("total"),
        per: z.enum(BUDGET_SCOPES).default("run_tree"),
        whenExhausted: z.enum(["deny", "hold"]).default("deny"),
        onCross: z.enum(BUDGET_ON_CROSS).default("none"),
      })
      .optional(),
  })
  .superRefine((r, ctx) => {
    if (r.effect === "budget" && !r.budget) ctx.addIssue({ code: "custom", path: ["budget"], message: "a budget rule needs budget" });
    if (r.effect !== "budget" && r.budget) ctx.addIssue({ code: "custom", path: ["budget"], message: "only a budget rule has budget" });
    if (r.effect !== "require_approval" && r.approval)
      ctx.addIssue({ code: "custom", path: ["approval"], message: "only a require_approval rule has approval" });
  });
export type PolicyRuleInput = z.infer<typeof PolicyRuleInput>;

export const PolicyDocument = requestShape("PolicyDocument", {
  rules: z
    .array(PolicyRuleInput)
    .max(100)
    .superRefine((rules, ctx) => {
      const seen = new Set<string>();
      rules.forEach((r, i) => {
        if (seen.has(r.name)) ctx.addIssue({ code: "custom", path: [i, "name"], message: `rule name ${r.name} is used twice` });
        seen.add(r.name);
      });
    }),
  /** Argument keys an approver never sees (at any depth). */
  redactKeys: z.array(z.string().trim().min(1).max(100)).max(50).default([]),
  note: z.string().trim().max(500).optional(),
});
export type PolicyDocument = z.infer<typeof PolicyDocument>;

export const PolicyVersionView = responseShape("PolicyVersion", {
  version: z.number().int(),
  document: z.object({ rules: z.array(z.unknown()), redactKeys: z.array(z.string()) }).passthrough(),
  note: z.string().nullable(),
  createdBy: z.string(),
  createdAt: IsoTime,
  enabled: z.boolean(),
  /** Against the version before it: rules added, removed and changed (by name), redacted keys changed. */
  diff: z.object({
    against: z.number().int().nullable(),
    added: z.array(z.string()),
    removed: z.array(z.string()),
    changed: z.array(z.object({ name: z.string(), before: z.unknown(), after: z.unknown() })),
    redactKeys: z.object({ added: z.array(z.string()), removed: z.array(z.string()) }),
  }),
});
export type PolicyVersionView = z.infer<typeof PolicyVersionView>;

export const PolicyView = responseShape("Policy", {
  enabledVersion: z.number().int().nullable(),
  current: PolicyVersionView.nullable(),
  versions: z.array(z.object({ version: z.number().int(), note: z.string().nullable(), createdBy: z.string(), createdAt: IsoTime })),
});

export const EnablePolicyBody = requestShape("EnablePolicy", {
  /** The version to enable; null turns the policy off (the gate decides by authority alone). */
  version: z.number().int().min(1).max(PG_INT_MAX).nullable(),
  reason: z.string().trim().min(1, "a reason is required").max(2000),
});

export const DryRunBody = requestShape("PolicyDryRun", { days: z.number().int().min(1).max(30).default(7) });
export const DryRunView = responseShape("PolicyDryRunResult", {
  version: z.number().int(),
  days: z.number().int(),
  considered: z.number().int(),
  truncated: z.boolean(),
  wouldHold: z.number().int(),
  wouldDeny: z.number().int(),
  wouldDenyBudget: z.number().int(),
  byRule: z.array(z.object({ name: z.string(), effect: z.string(), matched: z.number().int() })),
  /** Budgets in a unit past decisions carry no figure for (only `calls` is counted from history). */
  notSimulated: z.array(z.string()),
});
export type DryRunView = z.infer<typeof DryRunView>;

const Person = z.object({ userId: z.string(), email: z.string().nullable(), name: z.string().nullable() });

export const ApprovalView = responseShape("Approval", {
  id: z.string(),
  teamId: z.string(),
  runId: z.string(),
  rootRunId: z.string(),
  runPath: z.array(z.string()),
  runTitle: z.string().nullable(),
  leaseId: z.string(),
  epoch: z.number().int(),
  operationId: z.string(),
  tool: z.string(),
  /** The arguments with the policy's redacted keys replaced; null when the call sent none. */
  arguments: z.unknown().nullable(),
  argsDigest: z.string().nullable(),
  ruleName: z.string(),
  policyVersion: z.number().int(),
  approvers: z.object({ role: z.enum(APPROVER_ROLES), users: z.array(Person) }),
  /** pending past its deadline reads expired, whether or not a sweep has written it yet. */
  state: z.enum(APPROVAL_STATES),
  createdAt: IsoTime,
  expiresAt: IsoTime,
  decidedAt: IsoTime.nullable(),
  decidedBy: Person.nullable(),
  note: z.string().nullable(),
  voidedAt: IsoTime.nullable(),
  voidCause: z.string().nullable(),
  usedAt: IsoTime.nullable(),
  /** Whether the caller may approve or deny it now. */
  mayDecide: z.boolean(),
});
export type ApprovalView = z.infer<typeof ApprovalView>;

export const ApprovalsQuery = z.strictObject({
  state: z.enum(["open", "decided", "all"]).default("open"),
  limit: z.coerce.number().int().min(1).max(500).default(100),
});
export const DecideApprovalBody = requestShape("DecideApproval", {
  decision: z.enum(["approve", "deny"]),
  note: z.string().trim().max(2000).optional(),
});

export const BudgetView = responseShape("Budget", {
  name: z.string(),
  unit: z.string(),
  limit: z.number(),
  window: z.enum(BUDGET_WINDOWS),
  per: z.enum(BUDGET_SCOPES),
  whenExhausted: z.enum(["deny", "hold"]),
  onCross: z.enum(BUDGET_ON_CROSS),
  /** Current windows only, most used first. */
  usage: z.array(z.object({ scopeKey: z.string(), windowStart: IsoTime, used: z.number(), held: z.number() })),
  crossings: z.array(z.object({ scopeKey: z.string(), runId: z.string(), action: z.string(), crossedAt: IsoTime })),
});
export type BudgetView = z.infer<typeof BudgetView>;

const ADMINS = "console admins and admin operator keys (others: 403)";
const PEOPLE = "every person of the team (machine keys: 403)";

registerPath({
  method: "get",
  path: "/api/v1/policy",
  operationId: "getPolicy",
  tags: ["policy"],
  summary: "The team's enabled policy version, its rules and the list of versions",
  callers: "every key and person of the team",
  responses: { 200: { description: "the policy", schema: PolicyView } },
  errors: [],
});
registerPath({
  method: "post",
  path: "/api/v1/policy/versions",
  operationId: "createPolicyVersion",
  tags: ["policy"],
  summary: "Save a new policy version (not enabled until enabled; dry-run it first)",
  callers: ADMINS,
  body: PolicyDocument,
  responses: { 201: { description: "the new version with its diff against the previous one", schema: PolicyVersionView } },
  errors: [400, 403],
});
registerPath({
  method: "get",
  path: "/api/v1/policy/versions/{version}",
  operationId: "getPolicyVersion",
  tags: ["policy"],
  summary: "One policy version with its diff against the version before it",
  callers: "every key and person of the team",
  responses: { 200: { description: "the version", schema: PolicyVersionView } },
  errors: [400, 404],
});
registerPath({
  method: "post",
  path: "/api/v1/policy/versions/{version}/dry-run",
  operationId: "dryRunPolicy",
  tags: ["policy"],
  summary: "What the version would have done to the calls the gate allowed in the last days",
  callers: ADMINS,
  body: DryRunBody,
  responses: { 200: { description: "calls it would have held and denied", schema: DryRunView } },
  errors: [400, 403, 404],
});
registerPath({
  method: "put",
  path: "/api/v1/policy/enabled",
  operationId: "enablePolicy",
  tags: ["policy"],
  summary: "Enable a policy version (or none); the gate reads it from its next decision",
  callers: ADMINS,
  body: EnablePolicyBody,
  responses: { 200: { description: "the policy now", schema: PolicyView } },
  errors: [400, 403, 404],
});
registerPath({
  method: "get",
  path: "/api/v1/budgets",
  operationId: "listBudgets",
  tags: ["policy"],
  summary: "Spend against each budget of the enabled policy, in its current windows",
  callers: "every key and person of the team",
  responses: { 200: { description: "budgets", schema: z.object({ budgets: z.array(BudgetView) }) } },
  errors: [],
});
registerPath({
  method: "get",
  path: "/api/v1/approvals",
  operationId: "listApprovals",
  tags: ["policy"],
  summary: "Approvals of the team: open (pending, in time) by default, soonest deadline first",
  callers: "every key and person of the team",
  query: ApprovalsQuery,
  responses: { 200: { description: "approvals", schema: z.object({ approvals: z.array(ApprovalView) }) } },
  errors: [400],
});
registerPath({
  method: "get",
  path: "/api/v1/approvals/{approvalId}",
  operationId: "getApproval",
  tags: ["policy"],
  summary: "One approval",
  callers: "every key and person of the team",
  responses: { 200: { description: "the approval", schema: ApprovalView } },
  errors: [404],
});
registerPath({
  method: "post",
  path: "/api/v1/approvals/{approvalId}/decision",
  operationId: "decideApproval",
  tags: ["policy"],
  summary: "Approve or deny a pending approval (its rule's role or named people; never the run's own holder)",
  callers: PEOPLE,
  body: DecideApprovalBody,
  responses: { 200: { description: "decided", schema: ApprovalView } },
  errors: [400, 403, 404, 409],
});
