// ORACLE for the gate's policy step: random policies (allow / deny / require_approval / budget rules over tool
// globs, harnesses, agents and subtrees), a random approval state for the asked call, random budget usage and
// cost estimates are written to the real database; the SQL gate (quiesce_gate → quiesce_gate_policy) must answer
// exactly what the pure decideGate answers with the same facts (lib/control/policy.ts decidePolicy) — decision,
// reason, and the reservations it leaves. Every case has its own team, so no policy leaks into another case.
import { afterAll, expect, test } from "vitest";
import fc from "fast-check";
import { prisma } from "../../lib/platform/db/prisma";
import { closePool } from "../../lib/platform/db/pool";
import { gateCheck, gateCheckBatch, type GateInput } from "../../lib/modules/gate/statement";
import { decideGate, type GateFacts } from "../../lib/control/gate";
import { type ApprovalFacts, type BudgetUse } from "../../lib/control/policy";
import { HARNESSES, type Harness } from "../../lib/control/types";
import { createPolicyVersion, enablePolicy, rulesOf } from "../../lib/modules/policy";
import { PolicyDocument } from "../../lib/schemas/policy";
import type { Principal } from "../../lib/platform/auth/principal";
import { makeKey, makeRun, makeTeam, makeUser, opKey } from "../support/fixtures";

afterAll(async () => {
  await closePool();
  await prisma().$disconnect();
});

const TOOLS = ["deploy.preview", "deploy.prod", "search.web", "db.drop"];
const GLOBS = ["deploy.*", "deploy.prod", "*.web", "db.?rop", "*"];
const UNITS = ["calls", "usd"];

const arbRule = (i: number) =>
  fc.oneof(
    fc.record({
      name: fc.constant(`r${i}`),
      tool: fc.option(fc.constantFrom(...GLOBS), { nil: undefined }),
      harness: fc.option(fc.constantFrom(...HARNESSES), { nil: undefined }),
      agent: fc.option(fc.constantFrom("agent-a", "agent-b"), { nil: undefined }),
      subtreeOfRoot: fc.boolean(),
      effect: fc.constantFrom("allow", "deny", "require_approval"),
    }),
    fc.record({
      name: fc.constant(`r${i}`),
      tool: fc.option(fc.constantFrom(...GLOBS), { nil: undefined }),
      harness: fc.constant(undefined),
      agent: fc.constant(undefined),
      subtreeOfRoot: fc.constant(false),
      effect: fc.constant("budget"),
      budget: fc.record({
        unit: fc.constantFrom(...UNITS),
        limit: fc.constantFrom(0, 1, 2, 5),
        per: fc.constantFrom("run_tree", "agent", "team"),
        whenExhausted: fc.constantFrom("deny", "hold"),
      }),
      // usage near the limit, where the rule's edges are
      usedDelta: fc.constantFrom(-2, -1, -0.5, 0, 1),
    }),
  );

const arbCase = fc.record({
  rules: fc.integer({ min: 0, max: 4 }).chain((n) => fc.tuple(...Array.from({ length: n }, (_, i) => arbRule(i)))),
  tool: fc.constantFrom(...TOOLS),
  harness: fc.constantFrom(...HARNESSES),
  agent: fc.constantFrom("agent-a", "agent-b", null),
  approval: fc.constantFrom("none", "pending", "approved", "denied", "expired", "pending_late", "approved_late"),
  cost: fc.record({
    usd: fc.option(fc.constantFrom(0, 0.5, 1, 3), { nil: undefined }),
    calls: fc.option(fc.constantFrom(0, 1, 2), { nil: undefined }),
  }),
});

let asked = 0;
type Case = typeof arbCase extends fc.Arbitrary<infer T> ? T : never;

async function runCase(c: Case): Promise<void> {
  const t = await makeTeam("policy-oracle");
  const u = await makeUser(t.teamId, "admin");
  const admin: Principal = { type: "user", userId: u.userId, email: u.email, teamId: t.teamId, role: "admin" };
  const key = await makeKey(t.teamId, { kind: "agent" });
  const root = await makeRun(t.teamId, { holderKeyId: key.keyId });
  const leaf = await makeRun(t.teamId, {}, root);
  await prisma().run.update({ where: { id: leaf.runId }, data: { harness: c.harness as Harness, nativeAgentId: c.agent } });
  const doc = PolicyDocument.parse({
    rules: c.rules.map((r) => ({
      name: r.name,
      ...(r.tool ? { tool: r.tool } : {}),
      ...(r.harness ? { harness: r.harness } : {}),
      ...(r.agent ? { agent: r.agent } : {}),
      ...(r.subtreeOfRoot ? { subtree: root.runId } : {}),
      effect: r.effect,
      ...("budget" in r ? { budget: r.budget } : {}),
    })),
  });
  const v = await createPolicyVersion(admin, doc);
  await enablePolicy(admin, { version: v.version, reason: "oracle" });

  const operationId = opKey("oracle");
  const args = { n: 1 };
  const cost = Object.fromEntries(Object.entries(c.cost).filter(([, x]) => x !== undefined)) as Record<string, number>;
  const ask = () =>
    gateCheck({
      keyHash: key.hash,
      runId: leaf.runId,
      leaseId: leaf.leaseId,
      epoch: leaf.epoch,
      operationId,
      tool: c.tool,
      arguments: args,
      cost,
    });

  // The approval of this very call, when the case has one: made by asking once under an approval-only
  // version, then put in the case's state; the case's own version is enabled again after.
  let approval: ApprovalFacts | null = null;
  if (c.approval !== "none") {
    const only = await createPolicyVersion(admin, { rules: [{ name: "ask", effect: "require_approval" }] });
    await enablePolicy(admin, { version: only.version, reason: "oracle" });
    const held = await ask();
    if (!held.ok || !held.approvalId) throw new Error(`no approval: ${JSON.stringify(held)}`);
    const late = c.approval.endsWith("_late");
    const state = c.approval.replace("_late", "") as ApprovalFacts["state"];
    const expiresAt = new Date(Date.now() + (late ? -60_000 : 600_000));
    await prisma().approval.update({ where: { id: held.approvalId }, data: { state, expiresAt } });
    approval = { id: held.approvalId, state, expiresAt: expiresAt.getTime() };
    await enablePolicy(admin, { version: v.version, reason: "oracle" });
  }
  // Budget usage: each budget rule's current window and scope starts at the case's figure.
  const usage: BudgetUse[] = [];
  const scopeKeyOf = (per: string) => (per === "run_tree" ? root.runId : per === "agent" ? (c.agent ?? "-") : "-");
  for (const r of c.rules)
    if ("budget" in r) {
      const scopeKey = scopeKeyOf(r.budget.per);
      const used = Math.max(0, r.budget.limit + r.usedDelta);
      await prisma().budgetUsage.create({
        data: { teamId: t.teamId, budget: r.name, scopeKey, windowStart: new Date(0), unit: r.budget.unit, used },
      });
      usage.push({ budget: r.name, scopeKey, used });
    }

  // Every other case through quiesce_gate_batch (its set-based policy part, or its hand-off to quiesce_gate).
  const now = Date.now();
  const input: GateInput = {
    keyHash: key.hash,
    runId: leaf.runId,
    leaseId: leaf.leaseId,
    epoch: leaf.epoch,
    operationId,
    tool: c.tool,
    arguments: args,
    cost,
  };
  const got = ++asked % 2 === 0 ? (await gateCheckBatch([input]))[0]! : await ask();
  const facts: GateFacts = {
    now,
    mode: "gate",
    request: { runId: leaf.runId, leaseId: leaf.leaseId, epoch: leaf.epoch, operationId },
    chain: [root, leaf].map((r) => ({
      runId: r.runId,
      lifecycle: "normal",
      breaker: "closed",
      breakerChangedAt: 0,
      breakerProbeOpId: null,
      epoch: 1,
    })),
    leaseChain: [root, leaf].map((r) => ({ leaseId: r.leaseId, runId: r.runId, validUntil: now + 3_600_000, revokedAt: null })),
    operation: null,
    policy: {
      rules: rulesOf(doc),
      call: { tool: c.tool, harness: c.harness as Harness, agentIds: [c.agent, null], path: [root.runId, leaf.runId] },
      approval,
      usage,
      cost,
      scopeKeyOf: (per) => scopeKeyOf(per),
      now,
    },
  };
  const want = decideGate(facts);
  expect(got.ok).toBe(true);
  if (!got.ok) return;
  const label = JSON.stringify(c);
  expect(`${got.decision} ${got.reason}`, label).toBe(`${want.decision} ${want.reason}`);
  // What it reserved: exactly the pure verdict's reservations, and nothing on a refusal.
  const held = (
    await prisma().$queryRawUnsafe<{ budget: string; scopeKey: string; amount: number }[]>(
      `SELECT r.budget, r.scope_key AS "scopeKey", r.amount::float8 AS amount
         FROM operations o CROSS JOIN LATERAL unnest(o.budget_reservations) AS r WHERE o.team_id = $1`,
      t.teamId,
    )
  ).sort((x, y) => x.budget.localeCompare(y.budget));
  const reserve = want.policy?.decision === "allow" ? want.policy.reserve : [];
  expect(
    held.map((h) => ({ budget: h.budget, scopeKey: h.scopeKey, amount: Number(h.amount) })),
    label,
  ).toEqual(reserve);
}

test("the SQL policy step answers what decidePolicy answers, on generated policies, approvals and budgets", async () => {
  await fc.assert(fc.asyncProperty(arbCase, runCase), { numRuns: 150, seed: Number(process.env.ORACLE_SEED ?? Date.now() % 1e9) });
}, 240_000);
