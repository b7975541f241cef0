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
  | {
      decision: Exclude<Decision, "allow">;
      reason: GateReason;
      createApproval: boolean;
      approvalId: string | null;
      budget?: string;
      expire?: boolean;
      cross: string[];
    };

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
  const refuse = (
    decision: Exclude<Decision, "allow">,
    reason: GateReason,
    extra: Partial<Extract<PolicyVerdict, { decision: "deny" | "hold" }>> = {},
  ) => ({ decision, reason, createApproval: false, approvalId: null, cross: [], ...extra }) as PolicyVerdict;
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

const LADDER = ["viewer", "operator", "manager", "admin"] as const;

/**
 * Who may answer an approval: a person whose role is at least the rule's, or one it names — never the person
 * whose key holds the run (an agent does not approve its own call, whatever its key's role).
 */
export function mayDecideApproval(
  a: { approverRole: ApproverRole; approverUserIds: readonly string[]; holderUserId: string | null },
  person: { userId: string; role: (typeof LADDER)[number] },
): boolean {
  if (a.holderUserId !== null && a.holderUserId === person.userId) return false;
  if (a.approverUserIds.includes(person.userId)) return true;
  return LADDER.indexOf(person.role) >= LADDER.indexOf(a.approverRole);
}

/** The state a reader sees: a pending approval past its deadline is expired, whether or not a sweep wrote it. */
export function effectiveApprovalState(state: ApprovalState, expiresAt: number, now: number): ApprovalState {
  return state === "pending" && expiresAt <= now ? "expired" : state;
}

type Named = { name: string };

/** Rules added, removed and changed between two versions (by name), and the redacted keys' change. */
export function diffPolicies<R extends Named>(
  before: { rules: readonly R[]; redactKeys: readonly string[] } | null,
  after: { rules: readonly R[]; redactKeys: readonly string[] },
) {
  const old = new Map((before?.rules ?? []).map((r) => [r.name, r]));
  const now = new Map(after.rules.map((r) => [r.name, r]));
  const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
  const prevKeys = new Set(before?.redactKeys ?? []);
  const nextKeys = new Set(after.redactKeys);
  return {
    added: [...now.keys()].filter((n) => !old.has(n)),
    removed: [...old.keys()].filter((n) => !now.has(n)),
    changed: [...now.entries()]
      .filter(([n, r]) => old.has(n) && !same(old.get(n), r))
      .map(([n, r]) => ({ name: n, before: old.get(n) as unknown, after: r as unknown })),
    redactKeys: { added: [...nextKeys].filter((k) => !prevKeys.has(k)), removed: [...prevKeys].filter((k) => !nextKeys.has(k)) },
  };
}

/** A call the gate allowed, as the dry run replays it. */
export interface PastCall extends PolicyCall {
  at: number;
  rootRunId: string;
}

/**
 * What a policy would have done to past allowed calls, in time order: held for approval, denied by a rule, or
 * denied by a budget. Budgets are replayed only in `calls` (history has no estimate in other units).
 */
export function dryRun(rules: readonly PolicyRule[], calls: readonly PastCall[]) {
  const byRule = new Map(rules.map((r) => [r.name, 0]));
  const used = new Map<string, number>();
  const notSimulated = rules.filter((r) => r.effect === "budget" && r.budget!.unit !== "calls").map((r) => r.name);
  let wouldHold = 0;
  let wouldDeny = 0;
  let wouldDenyBudget = 0;
  for (const c of [...calls].sort((a, b) => a.at - b.at)) {
    const { access, budgets } = matchPolicy(rules, c);
    if (access) byRule.set(access.name, byRule.get(access.name)! + 1);
    for (const b of budgets) byRule.set(b.name, byRule.get(b.name)! + 1);
    if (access?.effect === "deny") {
      wouldDeny++;
      continue;
    }
    if (access?.effect === "require_approval") {
      wouldHold++;
      continue;
    }
    const counted = budgets.filter((b) => b.budget!.unit === "calls");
    const keys = counted.map((b) => {
      const spec = b.budget!;
      const scope = spec.per === "run_tree" ? c.rootRunId : spec.per === "agent" ? (c.agentIds.find((x) => x) ?? "-") : "-";
      const window = spec.window === "minute" ? Math.floor(c.at / 60_000) : 0;
      return { key: `${b.name}|${scope}|${window}`, limit: spec.limit };
    });
    if (keys.some((k) => !fits(used.get(k.key) ?? 0, 1, k.limit))) {
      wouldDenyBudget++;
      continue;
    }
    for (const k of keys) used.set(k.key, (used.get(k.key) ?? 0) + 1);
  }
  return {
    considered: calls.length,
    wouldHold,
    wouldDeny,
    wouldDenyBudget,
    byRule: rules.map((r) => ({ name: r.name, effect: r.effect, matched: byRule.get(r.name)! })),
    notSimulated,
  };
}
