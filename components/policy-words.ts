// A policy rule in words, for the Policies page: what it matches and what it does (docs/approvals-console.md#policies).
// The stored document has zod's defaults filled in; a missing approval block means the defaults too.
import { DEFAULT_APPROVAL_TTL_SECONDS } from "@/lib/control/policy";
import type { PolicyRuleInput } from "@/lib/schemas/policy";
import { shortId } from "./format";
import { APPROVER_WORDS, seconds } from "./words";

const PER: Record<string, string> = { run_tree: "run tree", agent: "agent", team: "team" };
const ON_CROSS: Record<string, string> = { trip_breaker: "trips the tree's breaker", pause: "pauses the tree" };

export function matchWords(r: PolicyRuleInput): string {
  const parts = [r.tool ? `tool ${r.tool}` : "every tool"];
  if (r.harness) parts.push(`under ${r.harness.replaceAll("_", " ")}`);
  if (r.agent) parts.push(`by agent ${r.agent}`);
  if (r.subtree) parts.push(`in run ${shortId(r.subtree)} and below`);
  return parts.join(", ");
}

export function effectWords(r: PolicyRuleInput): string {
  switch (r.effect) {
    case "allow":
      return "allow";
    case "deny":
      return "deny (policy denied)";
    case "require_approval": {
      const a = r.approval;
      const who = APPROVER_WORDS[a?.role ?? "operator"];
      const named = a?.users.length ? ` or ${a.users.join(", ")}` : "";
      return `hold until ${who}${named} approves, within ${seconds(a?.ttlSeconds ?? DEFAULT_APPROVAL_TTL_SECONDS)}`;
    }
    case "budget": {
      const b = r.budget!;
      const what = b.unit === "calls" ? "each call" : `the call's ${b.unit} estimate`;
      const window = b.window === "minute" ? "per minute" : "in total";
      const cross = b.onCross !== "none" ? `; crossing it ${ON_CROSS[b.onCross]}` : "";
      return `count ${what} against ${b.limit} ${b.unit} ${window} per ${PER[b.per]}; when used up, ${b.whenExhausted}${cross}`;
    }
  }
}

export const ruleWords = (r: PolicyRuleInput) => `${matchWords(r)}: ${effectWords(r)}`;

/** The editor's starting text when the team has no version yet. */
export const EXAMPLE_POLICY = {
  rules: [
    { name: "deploys-need-a-yes", tool: "deployment.*", effect: "require_approval", approval: { ttlSeconds: 900, role: "operator" } },
    { name: "no-drops", tool: "db.drop*", effect: "deny" },
    { name: "spend", effect: "budget", budget: { unit: "usd", limit: 50, window: "total", per: "run_tree" } },
  ],
  redactKeys: ["token", "password"],
  note: "first policy",
};
