// Spend against each budget of the enabled policy (docs/policies.md#budgets): what the current windows have used,
// how much of it is still only reserved, and when a budget was crossed.
import "server-only";
import { prisma } from "../../platform/db/prisma";
import { authorize, teamOf } from "../../platform/auth/authorize";
import type { Principal } from "../../platform/auth/principal";
import { badRequest } from "../../platform/errors";
import type { BudgetView } from "../../schemas/policy";

export async function listBudgets(p: Principal): Promise<BudgetView[]> {
  authorize(p, "run.read");
  const team = teamOf(p);
  if (!team) throw badRequest("a team is required");
  const t = await prisma().team.findUnique({ where: { id: team }, select: { policyVersion: true } });
  if (!t?.policyVersion) return [];
  const rules = await prisma().policyRule.findMany({
    where: { teamId: team, version: t.policyVersion, effect: "budget" },
    orderBy: { position: "asc" },
  });
  if (rules.length === 0) return [];
  const names = rules.map((r) => r.name);
  const [usage, crossings] = await Promise.all([
    prisma().$queryRawUnsafe<{ budget: string; scope_key: string; window_start: Date; used: string; held: string }[]>(
      `SELECT u.budget, u.scope_key, u.window_start, u.used::text AS used, u.held::text AS held FROM budget_usage u
        WHERE u.team_id = $1 AND u.budget = ANY ($2::text[])
          AND (u.window_start = 'epoch'::timestamptz OR u.window_start = date_trunc('minute', now()))
        ORDER BY u.used DESC LIMIT 2000`,
      team,
      names,
    ),
    prisma().budgetCrossing.findMany({ where: { teamId: team, budget: { in: names } }, orderBy: { crossedAt: "desc" }, take: 200 }),
  ]);
  return rules.map((r) => ({
    name: r.name,
    unit: r.budgetUnit!,
    limit: Number(r.budgetLimit),
    window: r.budgetWindow as BudgetView["window"],
    per: r.budgetPer as BudgetView["per"],
    whenExhausted: r.budgetWhenExhausted as BudgetView["whenExhausted"],
    onCross: r.budgetOnCross as BudgetView["onCross"],
    usage: usage
      .filter((u) => u.budget === r.name && (r.budgetWindow === "minute") === (u.window_start.getTime() !== 0))
      .map((u) => ({
        scopeKey: u.scope_key,
        windowStart: u.window_start.toISOString(),
        used: Number(u.used),
        held: Number(u.held),
      })),
    crossings: crossings
      .filter((c) => c.budget === r.name)
      .map((c) => ({ scopeKey: c.scopeKey, runId: c.runId, action: c.action, crossedAt: c.crossedAt.toISOString() })),
  }));
}
