// The nine findings against the first receipts (docs/evidence.md), each as a test that failed before the evidence model: against the
// real PostgreSQL (triggers, gate function, kill transaction) and the real barrier engine loop running
// in this process (the same code `quiesce barrier-worker` runs).
import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { prisma } from "../../lib/platform/db/prisma";
import { closePool } from "../../lib/platform/db/pool";
import { killRun } from "../../lib/modules/stop/kill";
import { pauseRun, resumeRun } from "../../lib/modules/runs/lifecycle";
import { getBarrierView, getReceipt } from "../../lib/modules/stop/barriers";
import { getConsoleBarrier } from "../../lib/modules/stop/console/barrier";
import { getConsoleReceipt } from "../../lib/modules/stop/console/receipt";
import { recordObserved } from "../../lib/modules/stop/observed";
import { resolveReconciliation } from "../../lib/modules/stop/reconciliations";
import { recordLateReport } from "../../lib/modules/stop/late-report";
import { createApiKey } from "../../lib/modules/keys/api-keys";
import { setTeamStopSettings } from "../../lib/modules/members/team-settings";
import { gateCheck } from "../../lib/modules/gate/statement";
import { runBarrierWorker } from "../../lib/modules/stop/engine/worker";
import { serializeReceipt, verifyReceipt } from "../../lib/control/evidence/receipt";
import { addOp, makeTeam, makeTree, receiptsOf, waitFor, type TeamFixture } from "./fixtures";

const SYSTEM = { type: "system", name: "test" } as const;
let team: TeamFixture;
let other: TeamFixture;
const stop = new AbortController();
let engine: Promise<void>;

beforeAll(async () => {
  team = await makeTeam();
  other = await makeTeam();
  // A small quiet period keeps the test quick; it still applies to every barrier (test 9 below).
  await setTeamStopSettings(SYSTEM, team.teamId, { quietPeriodMs: 300 });
  engine = runBarrierWorker({
    teamId: team.teamId,
    signal: stop.signal,
    claimMs: 3000,
    pollMs: 200,
    localSettleMs: 400,
    listen: true,
  });
});

afterAll(async () => {
  stop.abort();
  await engine;
  await prisma().$disconnect();
  await closePool();
});

const latest = async (barrierId: string, version = 1) =>
  waitFor(
    `receipt v${version} of ${barrierId}`,
    async () => (await receiptsOf(barrierId)).find((r) => r.version === version) ?? null,
    30_000,
    100,
  );

describe("stop-evidence findings", () => {
  test("1: child killed, then root: the root's receipt accounts for the child's call (never 'stopped and quiet' while it is unsettled)", async () => {
    const { root, children } = await makeTree(team.teamId, 1);
    await addOp(team.teamId, children[0]!, { state: "running", tool: "bash", operationId: `f1-${root.runId}` });
    const child = await killRun(team.users.operator.principal, children[0]!.runId, "child first");
    const rootKill = await killRun(team.users.operator.principal, root.runId, "then the root");
    // While the child's barrier is still settling, the root cannot be quiet.
    const early = await getBarrierView(team.users.viewer.principal, rootKill.barrierId);
    if (early.counts.pending > 0) {
      expect(["revoking", "settling"]).toContain(early.phase);
      expect(early.ladder.execution_quiesced.status).toBe("pending");
      expect(early.currentDecision).toBe("stop_incomplete");
    }
    const r = await latest(rootKill.barrierId);
    expect(r.decision).toBe("stop_incomplete");
    const body = r.body as any;
    expect(body.effects.unknown).toBe(1);
    expect(body.in_flight.map((x: any) => x.operation_id)).toEqual([`f1-${root.runId}`]);
    expect(body.summary.join(" ")).not.toMatch(/nothing was in flight/);
    expect((await latest(child.barrierId)).decision).toBe("stop_incomplete");
  });

  test("1b: root killed, then child: the child's kill joins the root's barrier; one settlement, both subtrees account for it", async () => {
    const { root, children } = await makeTree(team.teamId, 1);
    await addOp(team.teamId, children[0]!, { state: "running", tool: "bash", operationId: `f1b-${root.runId}` });
    const rootKill = await killRun(team.users.operator.principal, root.runId, "root first");
    const childKill = await killRun(team.users.operator.principal, children[0]!.runId, "then the child");
    expect(childKill).toEqual({ barrierId: rootKill.barrierId, created: false });
    const r = await latest(rootKill.barrierId);
    expect(r.decision).toBe("stop_incomplete");
    expect((r.body as any).effects.unknown).toBe(1);
  });

  test("2: an unknown before the kill keeps the receipt at stop_incomplete with unknown: 1", async () => {
    const { root } = await makeTree(team.teamId, 0);
    const op = await addOp(team.teamId, root, { state: "running", tool: "mcp.call", operationId: `f2-${root.runId}` });
    await prisma().operation.update({ where: { id: op.rowId }, data: { state: "aborted_unknown", finishedAt: new Date() } });
    const { barrierId } = await killRun(team.users.operator.principal, root.runId, "after the unknown");
    const r = await latest(barrierId);
    expect(r.decision).toBe("stop_incomplete");
    expect((r.body as any).effects.unknown).toBe(1);
    expect((r.body as any).reconciliation).toEqual([
      expect.objectContaining({ operation_id: op.operationId, assignee: team.users.admin.email, status: "assigned" }),
    ]);
  });

  test("3: an unknown without any kill opens an uncertain interval and a reconciliation with an owner at once", async () => {
    const { root } = await makeTree(team.teamId, 0);
    const op = await addOp(team.teamId, root, { state: "running", tool: "mcp.call", operationId: `f3-${root.runId}` });
    await prisma().operation.update({
      where: { id: op.rowId },
      data: { state: "aborted_unknown", stateReason: "transport_lost", finishedAt: new Date() },
    });
    const interval = await prisma().uncertainInterval.findFirstOrThrow({ where: { operationId: op.rowId } });
    expect(interval).toMatchObject({ cause: "transport_lost", endedAt: null });
    const rec = await prisma().reconciliation.findUniqueOrThrow({ where: { operationId: op.rowId } });
    expect(rec).toMatchObject({
      status: "assigned",
      assigneeUserId: team.users.admin.id,
      settlementId: null,
      assignedBy: "system:default-owner (team admin)",
    });
    // A second write of the same state opens nothing twice (exactly one reconciliation per unknown).
    await prisma().operation.update({ where: { id: op.rowId }, data: { state: "aborted_unknown" } });
    expect(await prisma().reconciliation.count({ where: { operationId: op.rowId } })).toBe(1);
    expect(await prisma().uncertainInterval.count({ where: { operationId: op.rowId } })).toBe(1);
    // The team's own default owner wins over the admin.
    await setTeamStopSettings(SYSTEM, team.teamId, { defaultReconcilerUserId: team.users.manager.id });
    const op2 = await addOp(team.teamId, root, { state: "running", tool: "mcp.call", operationId: `f3b-${root.runId}` });
    await prisma().operation.update({ where: { id: op2.rowId }, data: { state: "aborted_unknown" } });
    expect((await prisma().reconciliation.findUniqueOrThrow({ where: { operationId: op2.rowId } })).assigneeUserId).toBe(
      team.users.manager.id,
    );
    await setTeamStopSettings(SYSTEM, team.teamId, { defaultReconcilerUserId: null });
    // Resolving it without any barrier settles the operation and closes the interval.
    await resolveReconciliation(team.users.admin.principal, rec.id, {
      resolution: "effect_absent",
      evidence: "upstream log shows no call",
    });
    expect((await prisma().operation.findUniqueOrThrow({ where: { id: op.rowId } })).state).toBe("failed");
    expect((await prisma().uncertainInterval.findFirstOrThrow({ where: { operationId: op.rowId } })).endedAt).not.toBeNull();
    // Why it was unknown is kept, although resolving re-settled the operation (its state reason moved on).
    expect((await prisma().reconciliation.findUniqueOrThrow({ where: { id: rec.id } })).unknownReason).toBe(
      "its executor gave up on the call and could not say whether it took effect (its report was lost in transport)",
    );
    expect((await prisma().operation.findUniqueOrThrow({ where: { id: op.rowId } })).stateReason).not.toBe("transport_lost");
  });

  test("4: while an outcome is unknown the receipt never says 'nothing to roll back'; after a person settles it, it says who and when", async () => {
    const { root } = await makeTree(team.teamId, 0);
    const op = await addOp(team.teamId, root, { state: "running", tool: "bash", operationId: `f4-${root.runId}` });
    const { barrierId } = await killRun(team.users.operator.principal, root.runId, "stop");
    const v1 = await latest(barrierId);
    const s1 = (v1.body as any).summary.join(" ");
    expect(s1).not.toMatch(/nothing to roll back/i);
    expect(s1).not.toMatch(/unassigned|reconciled by the people/);
    const rec = await prisma().reconciliation.findUniqueOrThrow({ where: { operationId: op.rowId } });
    const why = (await prisma().settlement.findFirstOrThrow({ where: { barrierId, operationId: op.rowId } })).settledReason;
    expect(why).toBeTruthy();
    await resolveReconciliation(team.users.operator.principal, rec.id, {
      resolution: "effect_absent",
      evidence: "shell history shows the command never ran",
    });
    // The settlement's reason is now the resolution; the reconciliation keeps why it was unknown.
    expect((await prisma().settlement.findFirstOrThrow({ where: { barrierId, operationId: op.rowId } })).settledReason).toMatch(
      /^reconciled by /,
    );
    // Kept in the words the barrier's evidence used for it (a call with no provider to ask).
    expect((await prisma().reconciliation.findUniqueOrThrow({ where: { id: rec.id } })).unknownReason).toBe(
      "no provider to ask, and its executor never reported",
    );
    const v2 = await latest(barrierId, 2);
    const b2 = v2.body as any;
    expect(v2.decision).toBe("stopped_and_quiet");
    expect(b2.in_flight[0]).toMatchObject({ settled_by: "person" });
    expect(b2.human_settlements[0]).toMatchObject({
      by: team.users.operator.email,
      resolution: "effect_absent",
      evidence: "shell history shows the command never ran",
    });
    expect(b2.summary.join(" ")).toContain(`reconciled by ${team.users.operator.email}`);
    expect(b2.summary.join(" ")).not.toMatch(/settled by (its|their) provider/);
    const view = await getBarrierView(team.users.viewer.principal, barrierId);
    expect(view.ladder.execution_quiesced.detail).not.toMatch(/answered by its provider|settled by its provider/);
  });

  test("4b: a late claim does not close an unknown: the reconciliation stays with its person, and the claim is kept once", async () => {
    const { root } = await makeTree(team.teamId, 0);
    const op = await addOp(team.teamId, root, { state: "running", tool: "bash", operationId: `f4b-${root.runId}` });
    const { barrierId } = await killRun(team.users.operator.principal, root.runId, "stop");
    await latest(barrierId);
    const why = (await prisma().settlement.findFirstOrThrow({ where: { barrierId, operationId: op.rowId } })).settledReason;
    expect(why).toBeTruthy();
    const before = await prisma().reconciliation.findUniqueOrThrow({ where: { operationId: op.rowId } });
    const report = () =>
      prisma().$transaction((tx) =>
        recordLateReport(tx, {
          operationRowId: op.rowId,
          teamId: team.teamId,
          runId: root.runId,
          outcome: "succeeded",
          effect: { providerOperationId: "late-1" },
          reportedBy: "key:late-worker",
        }),
      );
    expect(await report()).toBe(true);
    expect(await report()).toBe(false);
    const rec = await prisma().reconciliation.findUniqueOrThrow({ where: { operationId: op.rowId } });
    expect(rec).toMatchObject({ status: before.status, resolution: null, resolvedBy: null });
    const set = await prisma().settlement.findFirstOrThrow({ where: { barrierId, operationId: op.rowId } });
    expect(set).toMatchObject({ settledState: "unknown", settledReason: why });
    expect(await prisma().operationClaim.findMany({ where: { operationId: op.rowId } })).toMatchObject([
      { outcome: "succeeded", providerOperationId: "late-1", reportedBy: "key:late-worker" },
    ]);
    expect(await prisma().effectReceipt.count({ where: { operationId: op.rowId } })).toBe(0);
  });

  test("5: one acknowledgment does not mark the whole subtree observed; quiesced is not done while an outcome is unknown", async () => {
    const { root, children } = await makeTree(team.teamId, 1);
    await addOp(team.teamId, root, { state: "running", tool: "bash", operationId: `f5-${root.runId}` });
    const { barrierId } = await killRun(team.users.operator.principal, root.runId, "stop");
    await recordObserved({ type: "system", name: "harness" }, children[0]!.runId, { meaning: "turn_interrupted" });
    await latest(barrierId);
    const view = await getBarrierView(team.users.viewer.principal, barrierId);
    expect(view.ladder.observed_by_target.status).toBe("uncertain");
    expect(view.ladder.observed_by_target.evidence).toMatchObject({ observed: 1, of: 2 });
    expect(view.ladder.execution_quiesced.status).not.toBe("done");
    expect(view.ladder.effects_settled.status).toBe("uncertain");
    // The run's last native state is written (test 9 below).
    expect((await prisma().run.findUniqueOrThrow({ where: { id: children[0]!.runId } })).lastNativeState).toBe("turn_interrupted");
  });

  test("6: one ladder and one serializer: API and console agree on every rung, and give the same receipt bytes", async () => {
    const { root } = await makeTree(team.teamId, 1);
    const { barrierId } = await killRun(team.users.operator.principal, root.runId, "stop");
    await latest(barrierId);
    const api = await getBarrierView(team.users.viewer.principal, barrierId);
    const con = await getConsoleBarrier(team.users.viewer.principal, barrierId);
    expect(con.ladder.map(({ id, ...r }) => [id, r])).toEqual(Object.entries(api.ladder));
    const a = await getReceipt(team.users.viewer.principal, barrierId);
    const c = (await getConsoleReceipt(team.users.viewer.principal, barrierId))!;
    for (const f of ["json", "yaml"] as const) expect(serializeReceipt(c.body, f)).toBe(serializeReceipt(a.body, f));
    expect(verifyReceipt({ body: a.body, canonical: a.canonical, digest: a.digest }).ok).toBe(true);
    expect(c.check.ok).toBe(true);
  });

  test("7: another team's gate call about this run leaves no row under it and is not counted", async () => {
    const { root } = await makeTree(team.teamId, 0);
    const { barrierId } = await killRun(team.users.operator.principal, root.runId, "stop");
    const key = await createApiKey(SYSTEM, { teamId: other.teamId, kind: "agent", name: "foreign" });
    const hash = createHash("sha256").update(key.secret).digest("hex");
    const ans = await gateCheck({
      keyHash: hash,
      runId: root.runId,
      leaseId: root.leaseId,
      epoch: 1,
      operationId: `f7-${root.runId}`,
      tool: "x",
    });
    expect(ans).toMatchObject({ ok: true, decision: "deny", reason: "missing_state" });
    expect(await prisma().gateDecision.count({ where: { runId: root.runId } })).toBe(0);
    await latest(barrierId);
    expect((await getBarrierView(team.users.viewer.principal, barrierId)).counts.lateRequestsDenied).toBe(0);
    // This team's own late request does count, live (not only when the barrier goes quiet).
    const own = await createApiKey(SYSTEM, { teamId: team.teamId, kind: "agent", name: "own" });
    await gateCheck({
      keyHash: createHash("sha256").update(own.secret).digest("hex"),
      runId: root.runId,
      leaseId: root.leaseId,
      epoch: 1,
      operationId: `f7b-${root.runId}`,
      tool: "x",
    });
    expect((await getBarrierView(team.users.viewer.principal, barrierId)).counts.lateRequestsDenied).toBe(1);
  });

  test("8: pause reclaim kills a tree paused past the team's policy, as the system, audited; off by default", async () => {
    const quiet = await makeTree(team.teamId, 0);
    const { root, children } = await makeTree(team.teamId, 1);
    expect((await prisma().team.findUniqueOrThrow({ where: { id: team.teamId } })).pausePolicySeconds).toBeNull();
    await pauseRun(team.users.operator.principal, quiet.root.runId, "hold");
    await pauseRun(team.users.operator.principal, root.runId, "hold for review");
    await new Promise((r) => setTimeout(r, 1200));
    expect((await prisma().run.findUniqueOrThrow({ where: { id: root.runId } })).lifecycle).toBe("paused"); // off: nothing happens
    await resumeRun(team.users.operator.principal, quiet.root.runId, "go");
    await setTeamStopSettings(SYSTEM, team.teamId, { pausePolicySeconds: 1 });
    try {
      const b = await waitFor("reclaim barrier", async () => prisma().barrier.findFirst({ where: { runId: root.runId } }), 20_000, 100);
      expect(b.requestedBy).toBe("system:pause-reclaim");
      expect(b.reason).toMatch(/pause reclaim: paused since .* longer than the team's 1 s pause policy/);
      expect((await prisma().run.findUniqueOrThrow({ where: { id: children[0]!.runId } })).lifecycle).toBe("killed");
      // Written right after the kill returns (its own transaction): the barrier is visible before it.
      await waitFor(
        "pause-reclaim audit row",
        async () => (await prisma().auditEvent.count({ where: { action: "run.pause_reclaimed", target: root.runId } })) > 0,
        20_000,
        100,
      );
      expect(await prisma().auditEvent.count({ where: { action: "run.pause_reclaimed", target: root.runId } })).toBe(1);
      expect((await prisma().run.findUniqueOrThrow({ where: { id: quiet.root.runId } })).lifecycle).toBe("normal"); // resumed: untouched
      expect((await latest(b.id)).decision).toBe("stopped_and_quiet");
    } finally {
      await setTeamStopSettings(SYSTEM, team.teamId, { pausePolicySeconds: null });
    }
  });

  test("9: the quiet period applies when no provider was touched", async () => {
    const { root } = await makeTree(team.teamId, 0);
    const { barrierId } = await killRun(team.users.operator.principal, root.runId, "stop");
    const r = await latest(barrierId);
    const b = await prisma().barrier.findUniqueOrThrow({ where: { id: barrierId } });
    expect(b.quietPeriodSeconds).toBe(0.3);
    expect(r.verifiedAt.getTime() - b.quietUntil!.getTime()).toBeGreaterThanOrEqual(0);
    expect((r.body as any).quiet_period_seconds).toBe(0.3);
  });
});
