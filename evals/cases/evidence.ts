// Stop evidence over a whole subtree (docs/evidence.md), as real multi-process scenarios on the eval stack:
// the web app answers the API, the barrier-worker process settles and issues receipts, the harness
// plays the agent and the operator. What a receipt claims must be what the facts show.
import { prisma } from "../../lib/platform/db/prisma";
import { resolveReconciliation } from "../../lib/modules/stop/reconciliations";
import { check, links, newRun, opId, waitFor, waitForReceipt, type ReceiptBody } from "../../lib/drill/support";
import type { Check, DrillContext } from "../../lib/drill/types";
import type { Stack } from "../support/stack";
import type { EvalCase } from "./types";

type Body = ReceiptBody & {
  in_flight?: { operation_id: string; settled_state: string; settled_by: string | null }[];
  summary?: string[];
  human_settlements?: { by: string; resolution: string }[];
};

/** A call allowed by the gate on `run` that never reports: still running when the stop comes. */
async function runningCall(ctx: DrillContext, run: { runId: string; leaseId: string; epoch: number }, label: string): Promise<string> {
  const operationId = opId(ctx, label);
  const a = await ctx.agent!.gate({ runId: run.runId, leaseId: run.leaseId, epoch: run.epoch, operationId, tool: "shell.exec" });
  if (a.decision !== "allow") throw new Error(`the gate did not allow ${label}: ${a.reason}`);
  return operationId;
}

const outcome = (checks: Check[], pass: string) =>
  checks.every((c) => c.ok)
    ? pass
    : `failed: ${checks
        .filter((c) => !c.ok)
        .map((c) => c.name)
        .join("; ")}`;

export const childThenRootKilled: EvalCase = {
  name: "child_then_root_killed",
  seed: "001",
  expected: "root_accounts_for_child_call",
  summary:
    "a child with a call in flight (no provider) is killed, then its root: the root's receipt waits for and accounts for the child's call — stop_incomplete with it unknown, never 'stopped and quiet'",
  needs: ["agent"],
  async run(stack: Stack) {
    const ctx = stack.drillContext();
    const root = await newRun(ctx, { title: "root (child then root)" });
    const child = await newRun(ctx, { parentRunId: root.runId, title: "child with a silent call" });
    const op = await runningCall(ctx, child, "child-call");
    const c = await ctx.operator.kill(child.runId, "eval: child first");
    const r = await ctx.operator.kill(root.runId, "eval: then the root");
    const receipt = (await waitForReceipt(ctx, ctx.operator, r.barrierId)) as Body;
    const line = receipt.in_flight?.find((x) => x.operation_id === op);
    const checks = [
      check("two barriers: the child's and the root's", c.barrierId !== r.barrierId, { child: c.barrierId, root: r.barrierId }),
      check("the root's receipt lists the child's call", !!line, receipt.in_flight),
      check("the call is unknown there, not settled", line?.settled_state === "unknown", line),
      check("the root's receipt is stop_incomplete", receipt.decision === "stop_incomplete", receipt.decision),
      check(
        "no sentence says nothing was in flight",
        !(receipt.summary ?? []).some((s) => /nothing was in flight/.test(s)),
        receipt.summary,
      ),
    ];
    return {
      observed: outcome(checks, "root_accounts_for_child_call"),
      checks,
      evidence: links(ctx, { runId: root.runId, barrierId: r.barrierId }),
      facts: { receipt },
    };
  },
};

export const rootThenChildKilled: EvalCase = {
  name: "root_then_child_killed",
  seed: "001",
  expected: "one_barrier_accounts_for_call",
  summary:
    "the root is killed, then its child: the child's kill returns the root's barrier (already covering it); the child's in-flight call is accounted for once",
  needs: ["agent"],
  async run(stack: Stack) {
    const ctx = stack.drillContext();
    const root = await newRun(ctx, { title: "root (root then child)" });
    const child = await newRun(ctx, { parentRunId: root.runId, title: "child with a silent call" });
    const op = await runningCall(ctx, child, "child-call");
    const r = await ctx.operator.kill(root.runId, "eval: root first");
    const c = await ctx.operator.kill(child.runId, "eval: then the child");
    const receipt = (await waitForReceipt(ctx, ctx.operator, r.barrierId)) as Body;
    const checks = [
      check("the child's kill answers with the root's barrier", c.barrierId === r.barrierId && c.created === false, c),
      check(
        "the call appears once, unknown",
        receipt.in_flight?.filter((x) => x.operation_id === op).length === 1 && receipt.effects?.unknown === 1,
        receipt.in_flight,
      ),
      check("stop_incomplete", receipt.decision === "stop_incomplete", receipt.decision),
    ];
    return {
      observed: outcome(checks, "one_barrier_accounts_for_call"),
      checks,
      evidence: links(ctx, { runId: root.runId, barrierId: r.barrierId }),
      facts: { receipt },
    };
  },
};

export const unknownBeforeKill: EvalCase = {
  name: "unknown_before_kill",
  seed: "001",
  expected: "stop_incomplete_unknown_1",
  summary:
    "a call's executor reports aborted_unknown before anyone stops the run; the kill's receipt must keep it: stop_incomplete, unknown 1, with a named owner (never 'unassigned')",
  needs: ["agent"],
  async run(stack: Stack) {
    const ctx = stack.drillContext();
    const run = await newRun(ctx, { title: "an unknown before the stop" });
    const op = await runningCall(ctx, run, "lost-call");
    await ctx.agent!.complete(op, { outcome: "aborted_unknown", detail: { cause: "transport_lost" } });
    const { barrierId } = await ctx.operator.kill(run.runId, "eval: stop after an unknown");
    const receipt = (await waitForReceipt(ctx, ctx.operator, barrierId)) as Body;
    const rec = receipt.reconciliation?.find((x) => x.operation_id === op);
    const checks = [
      check("stop_incomplete", receipt.decision === "stop_incomplete", receipt.decision),
      check("unknown: 1", receipt.effects?.unknown === 1, receipt.effects),
      check("its reconciliation has a named owner", !!rec?.assignee && !/unassigned/.test(rec.assignee), rec),
    ];
    return {
      observed: checks.every((c) => c.ok) ? "stop_incomplete_unknown_1" : `${receipt.decision}/unknown ${receipt.effects?.unknown}`,
      checks,
      evidence: links(ctx, { runId: run.runId, barrierId }),
      facts: { receipt },
    };
  },
};

export const longPauseReclaimed: EvalCase = {
  name: "long_pause_reclaimed",
  seed: "004",
  expected: "killed_by_pause_reclaim",
  summary:
    "a run paused longer than its team's pause policy is killed by the barrier engine as the system, with the reason and an audit row; its stop gets a receipt like any other",
  needs: ["agent"],
  async run(stack: Stack) {
    const ctx = stack.drillContext();
    const teamId = stack.fx.main.teamId;
    const run = await newRun(ctx, { title: "paused too long" });
    await ctx.operator.pause(run.runId, "eval: hold");
    const team = await prisma().team.findUniqueOrThrow({ where: { id: teamId }, select: { pausePolicySeconds: true } });
    // Turn reclaim on for this team (the eval team may not have it) and let the pause's time pass in
    // the row (the engine reads lifecycle_changed_at; waiting the real policy would take minutes).
    await prisma().team.update({ where: { id: teamId }, data: { pausePolicySeconds: team.pausePolicySeconds ?? 60 } });
    const policy = team.pausePolicySeconds ?? 60;
    await prisma().run.update({ where: { id: run.runId }, data: { lifecycleChangedAt: new Date(Date.now() - (policy + 1) * 1000) } });
    try {
      const b = await waitFor(
        "the reclaim barrier",
        () => prisma().barrier.findFirst({ where: { runId: run.runId } }),
        ctx.receiptTimeoutMs,
        200,
      );
      const receipt = await waitForReceipt(ctx, ctx.operator, b.id);
      const audit = await prisma().auditEvent.count({ where: { teamId, action: "run.pause_reclaimed", target: run.runId } });
      const checks = [
        check("killed as the system", b.requestedBy === "system:pause-reclaim", b.requestedBy),
        check("the reason names the policy", /pause reclaim: paused since .* pause policy/.test(b.reason), b.reason),
        check("one audit row says why", audit === 1, audit),
        check("the stop has a receipt", receipt.barrier_id === b.id, receipt.decision),
      ];
      return {
        observed: outcome(checks, "killed_by_pause_reclaim"),
        checks,
        evidence: links(ctx, { runId: run.runId, barrierId: b.id }),
        facts: { barrier: b.id },
      };
    } finally {
      await prisma().team.update({ where: { id: teamId }, data: { pausePolicySeconds: team.pausePolicySeconds } });
    }
  },
};

export const resolutionReissuesReceipt: EvalCase = {
  name: "resolution_reissues_receipt",
  seed: "001",
  expected: "v2_names_the_person",
  summary:
    "an unknown outcome is resolved by the person who owns it: the next receipt version says who settled it, when, the resolution and the evidence — never 'settled by its provider' — and chains to v1",
  needs: ["agent"],
  async run(stack: Stack) {
    const ctx = stack.drillContext();
    const run = await newRun(ctx, { title: "resolved later" });
    const op = await runningCall(ctx, run, "silent-call");
    const { barrierId } = await ctx.operator.kill(run.runId, "eval: stop, resolve later");
    const v1 = (await waitForReceipt(ctx, ctx.operator, barrierId)) as Body;
    // The owner (by default: who asked for the stop, else an admin) resolves it, as the console does.
    const row = await prisma().reconciliation.findFirstOrThrow({ where: { operation: { teamId: stack.fx.main.teamId, operationId: op } } });
    const owner = await prisma().membership.findFirstOrThrow({
      where: { teamId: stack.fx.main.teamId, userId: row.assigneeUserId ?? "" },
      include: { user: true },
    });
    await resolveReconciliation(
      { type: "user", userId: owner.userId, email: owner.user.email, teamId: owner.teamId, role: owner.role },
      row.id,
      { resolution: "effect_absent", evidence: "eval: the shell's history shows the command never ran" },
    );
    const v2 = (await waitForReceipt(ctx, ctx.operator, barrierId, 2)) as Body & { previous_digest?: string };
    const line = v2.in_flight?.find((x) => x.operation_id === op);
    const checks = [
      check("v1 was stop_incomplete", v1.decision === "stop_incomplete", v1.decision),
      check("v2 chains to v1", v2.previous_digest === v1.digest, { previous: v2.previous_digest, v1: v1.digest }),
      check("v2 is stopped_and_quiet", v2.decision === "stopped_and_quiet", v2.decision),
      check("the call was settled by a person", line?.settled_by === "person", line),
      check(
        "v2 names who, and the resolution",
        v2.human_settlements?.[0]?.by === owner.user.email && v2.human_settlements?.[0]?.resolution === "effect_absent",
        v2.human_settlements,
      ),
      check("no sentence credits a provider", !(v2.summary ?? []).some((s) => /settled by (its|their) provider/.test(s)), v2.summary),
    ];
    return {
      observed: outcome(checks, "v2_names_the_person"),
      checks,
      evidence: links(ctx, { runId: run.runId, barrierId }),
      facts: { v1: v1.digest, v2: v2.digest },
    };
  },
};

export const EVIDENCE_CASES: EvalCase[] = [
  childThenRootKilled,
  rootThenChildKilled,
  unknownBeforeKill,
  longPauseReclaimed,
  resolutionReissuesReceipt,
];
