// The team's policy as a pure rule (docs/policies.md): which rule matches a call, what an approval bound to the
// call answers, and whether the budgets' reservations fit. The gate's SQL (lib/modules/policy/sql/quiesce_gate_policy.sql)
// implements the same steps; test/gate/oracle.test.ts checks they agree. Change them together.
import type { Decision, GateReason, Harness } from "./types";

export const POLICY_EFFECTS = ["allow", "deny", "require_approval", "budget"] as const;
export type PolicyEffect = (typeof POLICY_EFFECTS)[number];
export const APPROVER_ROLES = ["operator", "manager", "admin"] as const;
export type ApproverRole = (typeof APPROVER_ROLES)[number];
export const BUDGET_WINDOWS = ["total", "minute"] as const;
export const BUDGET_SCOPES = ["run_tree", "agent", "team"] as const;
export const BUDGET_ON_CROSS = ["none", "trip_breaker", "pause"] as const;
export const APPROVAL_STATES = ["pending", "approved", "denied", "expired", "voided"] as const;
export type ApprovalState = (typeof APPROVAL_STATES)[number];
export const DEFAULT_APPROVAL_TTL_SECONDS = 900;

export interface BudgetSpec {
  unit: string;
  limit: number;
  window: (typeof BUDGET_WINDOWS)[number];
  per: (typeof BUDGET_SCOPES)[number];
  whenExhausted: "deny" | "hold";
  onCross: (typeof BUDGET_ON_CROSS)[number];
}

/** One rule as the gate reads it (a policy_rules row). */
export interface PolicyRule {
  name: string;
  /** Glob over the tool name (`*` any run of characters, `?` one); absent: every tool. */
  tool?: string;
  harness?: Harness;
  /** Matches the run's native agent id or its creator, as a fleet stop's agent filter does. */
  agent?: string;
  /** Matches the run and everything below it. */
  subtree?: string;
  effect: PolicyEffect;
  approval?: { ttlSeconds: number; role: ApproverRole; users: string[] };
  budget?: BudgetSpec;
}

/** The call's facts a rule matches on. */
export interface PolicyCall {
  tool: string;
  harness: Harness;
  agentIds: readonly (string | null)[];
  /** runs.path: root first, ending with the run. */
  path: readonly string[];
}

/** A glob as an anchored regular expression (what policy_rules.tool_regex stores). */
export function globToRegex(glob: string): string {
  let out = "^";
  for (const ch of glob) {
    if (ch === "*") out += ".*";
    else if (ch === "?") out += ".";
    else out += /[\\^$.|+()[\]{}]/.test(ch) ? `\\${ch}` : ch;
  }
  return `${out}$`;
}

export function ruleMatches(rule: PolicyRule, call: PolicyCall): boolean {
  if (rule.tool !== undefined && !new RegExp(globToRegex(rule.tool)).test(call.tool)) return false;
  if (rule.harness !== undefined && rule.harness !== call.harness) return false;
  if (rule.agent !== undefined && !call.agentIds.includes(rule.agent)) return false;
  if (rule.subtree !== undefined && !call.path.includes(rule.subtree)) return false;
  return true;
}

/** The first matching allow / deny / require_approval rule, and every matching budget (by name). */
export function matchPolicy(rules: readonly PolicyRule[], call: PolicyCall): { access: PolicyRule | null; budgets: PolicyRule[] } {
  const matching = rules.filter((r) => ruleMatches(r, call));
  return {
    access: matching.find((r) => r.effect !== "budget") ?? null,
    budgets: matching.filter((r) => r.effect === "budget").sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)),
  };
}

/** The approval bound to this call (same run, lease, epoch, operation and arguments), if one is live. */
export interface ApprovalFacts {
  id: string;
  state: Exclude<ApprovalState, "voided">;
  expiresAt: number;
}

export interface BudgetUse {
  budget: string;
  scopeKey: string;
  used: number;
}

export interface PolicyFacts {
  rules: readonly PolicyRule[];
  call: PolicyCall;
  approval: ApprovalFacts | null;
  /** The usage of each matching budget's current window and scope (missing: nothing used yet). */
  usage: readonly BudgetUse[];
  /** The call's estimate by unit. */
  cost: Readonly<Record<string, number>>;
  /** The key a budget counts under for its scope. */
  scopeKeyOf: (per: BudgetSpec["per"]) => string;
  now: number;
}

export type PolicyVerdict =
  | { decision: "allow"; reason: "allowed"; useApproval: string | null; reserve: { budget: string; scopeKey: string; amount: number }[] }
  | { decision: Exclude<Decision, "allow">; reason: GateReason; createApproval: boolean; approvalId: string | null; budget?: string; expire?: boolean; cross: string[] };

/** What a call reserves against a budget: one per call for `calls`, else its estimate in the unit (0 when absent). */
export function amountFor(unit: string, cost: Readonly<Record<string, number>>): number {
  return unit === "calls" ? (cost.calls ?? 1) : (cost[unit] ?? 0);
}

/** A reservation fits when it keeps the window within its limit; with no estimate, while something is left. */
export function fits(used: number, amount: number, limit: number): boolean {
  return !(used + amount > limit || (amount === 0 && used >= limit));
}

/** The policy step of the gate, for work its authority would admit now. */
export function decidePolicy(f: PolicyFacts): PolicyVerdict {
  const { access, budgets } = matchPolicy(f.rules, f.call);
  const refuse = (decision: Exclude<Decision, "allow">, reason: GateReason, extra: Partial<Extract<PolicyVerdict, { decision: "deny" | "hold" }>> = {}) =>
    ({ decision, reason, createApproval: false, approvalId: null, cross: [], ...extra }) as PolicyVerdict;
  if (access?.effect === "deny") return refuse("deny", "policy_denied");
  let useApproval: string | null = null;
  if (access?.effect === "require_approval") {
    const a = f.approval;
    if (!a) return refuse("hold", "awaiting_approval", { createApproval: true });
    if ((a.state === "pending" || a.state === "approved") && a.expiresAt <= f.now)
      return refuse("deny", "approval_expired", { approvalId: a.id, expire: true });
    if (a.state === "pending") return refuse("hold", "awaiting_approval", { approvalId: a.id });
    if (a.state === "denied") return refuse("deny", "approval_denied", { approvalId: a.id });
    if (a.state === "expired") return refuse("deny", "approval_expired", { approvalId: a.id });
    useApproval = a.id;
  }
  const reserve: { budget: string; scopeKey: string; amount: number }[] = [];
  let exhausted: string | null = null;
  let hold = false;
  const cross: string[] = [];
  for (const b of budgets) {
    const spec = b.budget!;
    const scopeKey = f.scopeKeyOf(spec.per);
    const used = f.usage.find((u) => u.budget === b.name && u.scopeKey === scopeKey)?.used ?? 0;
    const amount = amountFor(spec.unit, f.cost);
    if (fits(used, amount, spec.limit)) {
      reserve.push({ budget: b.name, scopeKey, amount });
      continue;
    }
    exhausted ??= b.name;
    hold ||= spec.whenExhausted === "hold";
    if (spec.onCross !== "none") cross.push(b.name);
  }
  if (exhausted !== null) return refuse(hold ? "hold" : "deny", "budget_exhausted", { budget: exhausted, cross });
  return { decision: "allow", reason: "allowed", useApproval, reserve };
}
