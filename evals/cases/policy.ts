// Authority that narrows on its own (docs/policies.md): approvals bound to one call, voided by a stop, expiring
// by design; budgets reserved in the gate's statement, never crossed by concurrent callers, tripping the
// breaker when crossed. A team of its own (fixtures `policy`): its policy changes no other case's gate.
// "observed" is what the gate, the approvals API and the database answered.
import type { QuiesceClient } from "../../lib/agent/sdk/client";
import { check, links } from "../../lib/drill/support";
import type { CaseOutcome, Check } from "../../lib/drill/types";
import type { DrillContext } from "../../lib/drill/types";
import { prisma } from "../../lib/platform/db/prisma";
import { sleep } from "../../lib/platform/wait";
import type { GateBody, GateResponse } from "../../lib/schemas/gate";
import type { Stack } from "../support/stack";
import { waitUntil } from "../support/proc";
import type { EvalCase } from "./types";

interface Team {
  agent: QuiesceClient;
  operator: QuiesceClient;
  admin: QuiesceClient;
  ctx: DrillContext;
  tag: string;
}

function teamOf(stack: Stack): Team {
  const k = stack.fx.policy.keys;
  return {
    agent: stack.client(k.agent!),
    operator: stack.client(k.operator!),
    admin: stack.client(k.admin!),
    ctx: stack.drillContext(),
    tag: `pol${stack.tag}`,
  };
}

let seq = 0;
const opId = (t: Team, label: string) => `${t.tag}-${label}-${++seq}`;

/** Saves and enables a version whose rules cover only this case's run tree (the `subtree` of each rule). */
async function enable(t: Team, rules: Record<string, unknown>[], rootRunId: string): Promise<number> {
  const v = await t.admin.request<{ version: number }>("POST", "/api/v1/policy/versions", {
    rules: rules.map((r) => ({ ...r, subtree: rootRunId })),
    note: "eval",
  });
  await t.admin.request("PUT", "/api/v1/policy/enabled", { version: v.json.version, reason: "eval" });
  return v.json.version;
}

async function run(t: Team, title: string) {
  return t.agent.createRun({ taskId: `${t.tag}-${title}-${++seq}`, title });
}

type Run = Awaited<ReturnType<typeof run>>;
const body = (t: Team, r: Run, label: string, tool: string, extra: Partial<GateBody> = {}): GateBody => ({
  runId: r.runId,
  leaseId: r.leaseId,
  epoch: r.epoch,
  operationId: opId(t, label),
  tool,
  ...extra,
});
const said = (a: GateResponse) => `${a.decision}_${a.reason}`;

async function approval(t: Team, id: string) {
  return (await t.operator.request<{ state: string; voidCause: string | null }>("GET", `/api/v1/approvals/${id}`)).json;
}
async function decide(t: Team, id: string, decision: "approve" | "deny"): Promise<number> {
  return t.operator
    .request("POST", `/api/v1/approvals/${id}/decision`, { decision })
    .then(() => 200)
    .catch((e: { status?: number }) => e.status ?? 0);
}
async function openIds(t: Team): Promise<string[]> {
  return (await t.operator.request<{ approvals: { id: string }[] }>("GET", "/api/v1/approvals")).json.approvals.map((a) => a.id);
}

const DEPLOY_NEEDS_A_YES = { name: "deploy-needs-a-yes", tool: "deployment.*", effect: "require_approval" };

function outcome(observed: string, checks: Check[], t: Team, runId: string, facts: Record<string, unknown>): CaseOutcome {
  return { observed, checks, evidence: links(t.ctx, { runId }), facts };
}

const approvalVoidedByKill: EvalCase = {
  name: "approval_voided_by_kill",
  seed: "001",
  expected: "voided_by_kill_and_denied",
  summary:
    "a call waits for a person's yes; the run is killed before anyone answers: the approval is voided at once (off every queue), a late yes is refused, and the call is denied",
  needs: [],
  async run(stack) {
    const t = teamOf(stack);
    const r = await run(t, "deploy preview");
    await enable(t, [{ ...DEPLOY_NEEDS_A_YES }], r.runId);
    const call = body(t, r, "reserve", "deployment.reserve_preview", { arguments: { env: "preview" } });
    const held = await t.agent.gate(call);
    const id = held.approvalId ?? "";
    const queuedBefore = (await openIds(t)).includes(id);
    await t.operator.kill(r.runId, "eval: stop before the answer");
    const a = await approval(t, id);
    const lateYes = await decide(t, id, "approve");
    const after = await t.agent.gate(call);
    const checks = [
      check("the call was held awaiting_approval with its approval id", said(held) === "hold_awaiting_approval" && id !== "", held),
      check("the card was in the queue before the kill", queuedBefore),
      check("the kill voided it (cause: killed)", a.state === "voided" && a.voidCause === "killed", a),
      check("it left the queue", !(await openIds(t)).includes(id)),
      check("a yes after the kill is refused (409)", lateYes === 409, lateYes),
      check("the call is denied", after.decision === "deny", after),
    ];
    const ok = a.state === "voided" && a.voidCause === "killed" && after.decision === "deny" && lateYes === 409;
    return outcome(ok ? "voided_by_kill_and_denied" : `${a.state}_${a.voidCause}_${said(after)}`, checks, t, r.runId, { approvalId: id });
  },
};

const approvalExpiresBeforeAnswer: EvalCase = {
  name: "approval_expires_before_answer",
  seed: "004",
  expected: "deny_approval_expired",
  summary:
    "authority that expires by design: nobody answers within the approval's time to live; the engine's sweep expires it, a late yes is refused, and the call is denied approval_expired",
  needs: [],
  async run(stack) {
    const t = teamOf(stack);
    // The policy team's own barrier engine: its sweep is what writes the expiry.
    const engine = stack.startEngine("policy-engine", stack.fx.policy.teamId);
    const r = await run(t, "deploy preview, nobody around");
    await enable(t, [{ ...DEPLOY_NEEDS_A_YES, approval: { ttlSeconds: 10 } }], r.runId);
    const call = body(t, r, "reserve", "deployment.reserve_preview");
    const held = await t.agent.gate(call);
    const id = held.approvalId ?? "";
    const stored = await waitUntil(
      "the sweep to write the expiry",
      async () => {
        const row = await prisma().approval.findUnique({ where: { id } });
        return row?.state === "expired" ? row : null;
      },
      40_000,
      250,
    ).finally(() => engine.stop("SIGTERM", 5000));
    const lateYes = await decide(t, id, "approve");
    const after = await t.agent.gate(call);
    const checks = [
      check("held awaiting_approval", said(held) === "hold_awaiting_approval", held),
      check("the sweep wrote it expired", stored?.state === "expired", stored?.state),
      check("a late yes is refused (409)", lateYes === 409, lateYes),
      check("the call is denied approval_expired", said(after) === "deny_approval_expired", after),
    ];
    return outcome(said(after), checks, t, r.runId, { approvalId: id, expiresAt: stored?.expiresAt });
  },
};

const approvalBoundToArguments: EvalCase = {
  name: "approval_bound_to_arguments",
  seed: "001",
  expected: "only_the_approved_call_admitted",
  summary:
    "a yes for one call (its operation id and arguments) admits that call only: the same operation with other arguments, or the same arguments under another operation id, each wait for a yes of their own",
  needs: [],
  async run(stack) {
    const t = teamOf(stack);
    const r = await run(t, "deploy preview, approved once");
    await enable(t, [{ ...DEPLOY_NEEDS_A_YES }], r.runId);
    const a = body(t, r, "a", "deployment.reserve_preview", { arguments: { env: "preview" } });
    const held = await t.agent.gate(a);
    const yes = await decide(t, held.approvalId ?? "", "approve");
    const swapped = await t.agent.gate({ ...a, arguments: { env: "production" } });
    const other = await t.agent.gate({ ...a, operationId: opId(t, "b") });
    const admitted = await t.agent.gate(a);
    const checks = [
      check("call A was approved", yes === 200, yes),
      check(
        "A's operation with other arguments waits for its own yes",
        said(swapped) === "hold_awaiting_approval" && swapped.approvalId !== held.approvalId,
        swapped,
      ),
      check(
        "A's arguments under another operation id wait for their own yes",
        said(other) === "hold_awaiting_approval" && other.approvalId !== held.approvalId,
        other,
      ),
      check("call A itself is allowed", said(admitted) === "allow_allowed", admitted),
    ];
    const ok = checks.every((c) => c.ok);
    return outcome(ok ? "only_the_approved_call_admitted" : said(swapped), checks, t, r.runId, { approvalId: held.approvalId });
  },
};

const LIMIT = 10;
const CALLERS = 30;

const budgetConcurrentOverrunPrevented: EvalCase = {
  name: "budget_concurrent_overrun_prevented",
  seed: "000",
  expected: `allowed_${LIMIT}_of_${CALLERS}`,
  summary: `${CALLERS} calls at once against a budget of ${LIMIT} calls: the reservation is made inside the gate's statement, so exactly ${LIMIT} start and no call starts over budget`,
  needs: [],
  async run(stack) {
    const t = teamOf(stack);
    const r = await run(t, "fan out");
    await enable(t, [{ name: "ten-calls", effect: "budget", budget: { unit: "calls", limit: LIMIT } }], r.runId);
    // Three clients (three connections each way), all at once.
    const clients = [t.agent, stack.client(stack.fx.policy.keys.agent!), stack.client(stack.fx.policy.keys.agent!)];
    const answers = await Promise.all(
      Array.from({ length: CALLERS }, (_, i) => clients[i % clients.length]!.gate(body(t, r, `c${i}`, "search.web"))),
    );
    const allowed = answers.filter((a) => a.decision === "allow").length;
    const exhausted = answers.filter((a) => said(a) === "deny_budget_exhausted").length;
    const running = await prisma().operation.count({ where: { runId: r.runId, state: "running" } });
    const usage = await prisma().budgetUsage.findMany({ where: { scopeKey: r.runId } });
    const checks = [
      check(`exactly ${LIMIT} allowed`, allowed === LIMIT, allowed),
      check("every other call denied budget_exhausted", exhausted === CALLERS - LIMIT, exhausted),
      check(`${LIMIT} operations running`, running === LIMIT, running),
      check("the budget's usage is its limit", usage.length === 1 && Number(usage[0]!.used) === LIMIT, usage),
    ];
    return outcome(`allowed_${allowed}_of_${CALLERS}`, checks, t, r.runId, { allowed, exhausted });
  },
};

const budgetCrossingTripsBreaker: EvalCase = {
  name: "budget_crossing_trips_breaker",
  seed: "000",
  expected: "breaker_open_by_budget",
  summary:
    "spend estimates reserved per call against a 1 USD budget set to trip the breaker when crossed: the call that would cross it is denied, the tree's breaker opens (held, audited as the budget), and nothing is killed",
  needs: [],
  async run(stack) {
    const t = teamOf(stack);
    const r = await run(t, "spend");
    await enable(t, [{ name: "one-dollar", effect: "budget", budget: { unit: "usd", limit: 1, onCross: "trip_breaker" } }], r.runId);
    const first = await t.agent.gate(body(t, r, "a", "llm.complete", { cost: { usd: 0.4 } }));
    const second = await t.agent.gate(body(t, r, "b", "llm.complete", { cost: { usd: 0.4 } }));
    const third = await t.agent.gate(body(t, r, "c", "llm.complete", { cost: { usd: 0.4 } }));
    await sleep(50);
    const view = await t.operator.getRun(r.runId);
    const next = await t.agent.gate(body(t, r, "d", "llm.complete", { cost: { usd: 0 } }));
    const audit = await prisma().auditEvent.findMany({ where: { target: r.runId, action: "breaker.trip" } });
    const row = await prisma().run.findUniqueOrThrow({ where: { id: r.runId } });
    const checks = [
      check("two calls fit (0.8 of 1)", first.decision === "allow" && second.decision === "allow", [first, second]),
      check(
        "the crossing call is denied budget_exhausted, naming the budget",
        said(third) === "deny_budget_exhausted" && third.budget === "one-dollar",
        third,
      ),
      check(
        "the tree's breaker is open and held, by the budget",
        row.breaker === "open" && row.breakerHeld && row.breakerChangedBy === "system:budget",
        {
          breaker: row.breaker,
          held: row.breakerHeld,
          by: row.breakerChangedBy,
        },
      ),
      check("the run is not killed", row.lifecycle !== "killed", row.lifecycle),
      check("the next call is denied breaker_open", said(next) === "deny_breaker_open", next),
      check("the trip is audited once, as the budget", audit.length === 1 && audit[0]!.actor === "system:budget", audit.length),
      check(
        "the run's API view shows the breaker open",
        (view as { breaker?: string }).breaker === "open",
        (view as { breaker?: string }).breaker,
      ),
    ];
    const ok = row.breaker === "open" && row.breakerChangedBy === "system:budget";
    return outcome(ok ? "breaker_open_by_budget" : `breaker_${row.breaker}`, checks, t, r.runId, {});
  },
};

export const POLICY_CASES: EvalCase[] = [
  approvalVoidedByKill,
  approvalExpiresBeforeAnswer,
  approvalBoundToArguments,
  budgetConcurrentOverrunPrevented,
  budgetCrossingTripsBreaker,
];
