// Every settlement path of docs/architecture.md#the-cancellation-barrier against REAL processes: the simulated provider
// (`quiesce provider-sim`) and the barrier engine (`quiesce barrier-worker`) run as their own
// processes; kills go through the real kill transaction; the receipt CLI runs as a process too.
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { prisma } from "../../lib/platform/db/prisma";
import { closePool } from "../../lib/platform/db/pool";
import { killRun } from "../../lib/modules/stop/kill";
import { getReceipt, verifyReceipt, getBarrierView } from "../../lib/modules/stop/barriers";
import { assignReconciliation, listReconciliations, resolveReconciliation } from "../../lib/modules/stop/reconciliations";
import { recordLateReport } from "../../lib/modules/stop/late-report";
import { SimProviderClient } from "../../lib/modules/stop/providers/sim-client";
import { verifyReceipt as verifyReceiptBody } from "../../lib/control/evidence/receipt";
import {
  addOp,
  makeProvider,
  makeTeam,
  makeTree,
  receiptsOf,
  spawnCli,
  startSimProcess,
  startWorkerProcess,
  waitFor,
  type Proc,
  type TeamFixture,
} from "./fixtures";

const PORT = 4711;
let team: TeamFixture;
let sim: Proc & { url: string };
let worker: Proc;
let simc: SimProviderClient;

beforeAll(async () => {
  team = await makeTeam();
  sim = await startSimProcess(PORT);
  simc = new SimProviderClient(sim.url);
  await makeProvider(team.teamId, {
    name: "deploy-sim",
    url: sim.url,
    quietPeriodSeconds: 0,
    settleDeadlineMs: 2500,
    rollbackOwner: "release-oncall",
  });
  await makeProvider(team.teamId, {
    name: "deploy-slow-quiet",
    url: sim.url,
    quietPeriodSeconds: 2,
    settleDeadlineMs: 2500,
    rollbackOwner: "platform-oncall",
  });
  worker = startWorkerProcess(team.teamId, { QUIESCE_BARRIER_CLAIM_MS: "5000", QUIESCE_LOCAL_SETTLE_MS: "1500" });
}, 120_000);

afterAll(async () => {
  await worker?.stop();
  await sim?.stop();
  await prisma().$disconnect();
  await closePool();
});

async function receiptVersion(barrierId: string, version: number) {
  return waitFor(
    `receipt v${version} of ${barrierId}`,
    async () => {
      const rs = await receiptsOf(barrierId);
      if (worker.child.exitCode !== null) throw new Error(`barrier-worker exited:\n${worker.output()}`);
      return rs.find((r) => r.version === version) ?? null;
    },
    90_000,
    200,
  );
}

describe("settlement paths against the real provider and engine processes", () => {
  test("provider cancels cleanly → cancelled_without_effect → stopped_and_quiet", async () => {
    const { root } = await makeTree(team.teamId, 1);
    const job = await simc.createJob({ mode: "cancel_cleanly", runId: root.runId });
    await addOp(team.teamId, root, {
      state: "running",
      providerName: "deploy-sim",
      providerJobId: job.jobId,
      operationId: "reserve-preview-clean",
    });
    await addOp(team.teamId, root, { state: "queued" });
    const { barrierId } = await killRun(team.users.operator.principal, root.runId, "wrong_commit_detected");
    const r = await receiptVersion(barrierId, 1);
    expect(r.decision).toBe("stopped_and_quiet");
    const body = r.body as Record<string, any>;
    expect(body.effects).toMatchObject({ completed_and_verified: 0, cancelled_without_effect: 1, unknown: 0 });
    expect(body.work).toMatchObject({ queued_cancelled: 1, in_flight_settled: 1 });
    expect(body.authority).toMatchObject({ root_lease: "revoked", descendant_leases_revoked: 1, active_leases: 0, current_epoch: 2 });
    expect(body.in_flight[0]).toMatchObject({
      operation_id: "reserve-preview-clean",
      cancellation: { provider_response: "accepted" },
      effect_check: { expected: "absence", observed: "absent" },
      settled_state: "cancelled_without_effect",
    });
    expect(body.observed_by_target).toBe("uncertain");
    expect(verifyReceiptBody({ body }).ok).toBe(true);
    expect((await verifyReceipt(team.users.viewer.principal, barrierId)).ok).toBe(true);
    expect((await simc.getJob(job.jobId)).cancelRequests).toBe(1);
    const view = await getBarrierView(team.users.viewer.principal, barrierId);
    expect(view.phase).toBe("complete");
    expect(view.ladder.effects_settled!.status).toBe("done");
    expect(view.ladder.observed_by_target!.status).toBe("uncertain");
    expect(await prisma().reconciliation.count({ where: { settlement: { barrierId } } })).toBe(0);
  }, 120_000);

  test("provider commits during the cancel race → completed_and_verified with an effect receipt and rollback owner", async () => {
    const { root } = await makeTree(team.teamId, 0);
    const job = await simc.createJob({ mode: "commit_during_cancel", runId: root.runId });
    const op = await addOp(team.teamId, root, {
      state: "running",
      providerName: "deploy-sim",
      providerJobId: job.jobId,
      operationId: "reserve-preview-race",
    });
    const { barrierId } = await killRun(team.users.operator.principal, root.runId, "wrong_commit_detected");
    const r = await receiptVersion(barrierId, 1);
    const body = r.body as Record<string, any>;
    expect(body.effects).toMatchObject({ completed_and_verified: 1, cancelled_without_effect: 0, unknown: 0 });
    // The provider said "accepted" — and the effect is there anyway. Accepted is not a settled state.
    expect(body.in_flight[0]).toMatchObject({
      cancellation: { provider_response: "accepted" },
      effect_check: { observed: "present" },
      settled_state: "completed_and_verified",
    });
    expect(body.effect_receipts).toEqual([
      expect.objectContaining({
        operation_id: "reserve-preview-race",
        provider_operation_id: `deploy-${job.jobId}`,
        rollback_owner: "release-oncall",
        source: "provider",
      }),
    ]);
    expect(r.decision).toBe("stopped_and_quiet");
    const eff = await prisma().effectReceipt.findMany({ where: { operationId: op.rowId } });
    expect(eff).toHaveLength(1);
    expect((await prisma().operation.findUniqueOrThrow({ where: { id: op.rowId } })).state).toBe("succeeded");
  }, 120_000);

  test("status endpoint down → unknown → stop_incomplete naming the holder → assign → resolve → new version stopped_and_quiet", async () => {
    const { root } = await makeTree(team.teamId, 0);
    const job = await simc.createJob({ mode: "status_down", runId: root.runId });
    const op = await addOp(team.teamId, root, {
      state: "running",
      providerName: "deploy-sim",
      providerJobId: job.jobId,
      operationId: "reserve-preview-blind",
    });
    const { barrierId } = await killRun(team.users.operator.principal, root.runId, "wrong_commit_detected");
    const v1 = await receiptVersion(barrierId, 1);
    expect(v1.decision).toBe("stop_incomplete");
    const b1 = v1.body as Record<string, any>;
    expect(b1.effects).toMatchObject({ completed_and_verified: 0, cancelled_without_effect: 0, unknown: 1 });
    // Never "unassigned": the person who asked for the stop owns the unknown until someone else is named.
    expect(b1.reconciliation).toEqual([
      expect.objectContaining({
        operation_id: "reserve-preview-blind",
        assignee: team.users.operator.email,
        assigned_by: "system:default-owner (asked for the stop)",
        status: "assigned",
        cause: "provider_status_unavailable",
      }),
    ]);
    const interval = await prisma().uncertainInterval.findFirstOrThrow({ where: { operationId: op.rowId } });
    expect(interval).toMatchObject({ cause: "provider_status_unavailable", endedAt: null });
    expect((await prisma().operation.findUniqueOrThrow({ where: { id: op.rowId } })).state).toBe("aborted_unknown");

    const [rec] = await listReconciliations(team.users.manager.principal, { barrierId });
    expect(rec).toMatchObject({ status: "assigned", assignee: { email: team.users.operator.email }, cause: "provider_status_unavailable" });
    // Only managers/admins assign; the assignee must be a member; only the assignee or a manager resolves.
    await expect(assignReconciliation(team.users.operator.principal, rec!.id, team.users.viewer.id)).rejects.toMatchObject({
      code: "forbidden",
    });
    await expect(assignReconciliation(team.users.manager.principal, rec!.id, "user_not_a_member")).rejects.toMatchObject({
      code: "bad_request",
    });
    const assigned = await assignReconciliation(team.users.manager.principal, rec!.id, team.users.viewer.id);
    expect(assigned.receiptVersion).toBe(2);
    const v2 = await getReceipt(team.users.viewer.principal, barrierId);
    expect(v2.version).toBe(2);
    expect(v2.decision).toBe("stop_incomplete");
    expect((v2.body as any).reconciliation[0]).toMatchObject({ assignee: team.users.viewer.email, status: "assigned" });
    await expect(
      resolveReconciliation(team.users.operator.principal, rec!.id, { resolution: "effect_absent", evidence: "looked" }),
    ).rejects.toMatchObject({ code: "forbidden" });
    const resolved = await resolveReconciliation(team.users.viewer.principal, rec!.id, {
      resolution: "effect_absent",
      evidence: "deploy console shows no reservation for the run",
    });
    expect(resolved.receiptVersion).toBe(3);
    await expect(
      resolveReconciliation(team.users.manager.principal, rec!.id, { resolution: "effect_present", evidence: "x" }),
    ).rejects.toMatchObject({ code: "conflict" });

    const v3 = await getReceipt(team.users.viewer.principal, barrierId);
    expect(v3).toMatchObject({ version: 3, decision: "stopped_and_quiet" });
    expect(v3.versions.map((v) => v.version)).toEqual([1, 2, 3]);
    // The person's settlement is in the receipt: who, when, what, on what evidence — never "by its provider".
    expect((v3.body as any).human_settlements).toEqual([
      expect.objectContaining({
        operation_id: "reserve-preview-blind",
        by: team.users.viewer.email,
        resolution: "effect_absent",
        evidence: "deploy console shows no reservation for the run",
      }),
    ]);
    expect((v3.body as any).in_flight[0]).toMatchObject({ settled_by: "person", settled_state: "cancelled_without_effect" });
    expect((v3.body as any).summary.join(" ")).toContain(`1 reconciled by ${team.users.viewer.email} on `);
    expect((v3.body as any).summary.join(" ")).not.toMatch(/settled by its provider/);
    expect((v3.body as any).effects).toMatchObject({ completed_and_verified: 0, cancelled_without_effect: 1, unknown: 0 });
    expect((v3.body as any).previous_digest).toBe(v2.digest);
    // Old versions stay readable and verifiable.
    const old = await getReceipt(team.users.viewer.principal, barrierId, 1);
    expect(old.decision).toBe("stop_incomplete");
    expect(old.digest).toBe(v1.digest);
    for (const v of [1, 2, 3]) expect((await verifyReceipt(team.users.viewer.principal, barrierId, v)).ok).toBe(true);
    expect(await prisma().uncertainInterval.findFirstOrThrow({ where: { operationId: op.rowId } })).toMatchObject({
      resolution: "cancelled_without_effect",
    });
    expect((await prisma().uncertainInterval.findFirstOrThrow({ where: { operationId: op.rowId } })).endedAt).not.toBeNull();

    // The reviewer's CLI, as a real process: verify, and read an old version as YAML.
    const verify = spawnCli(["receipt", barrierId, "--verify"]);
    const code = await new Promise<number>((res) => verify.child.once("exit", (c) => res(c ?? -1)));
    expect(code, verify.output()).toBe(0);
    expect(verify.output()).toContain(`digest verified: sha256:${v3.digest}`);
    const yaml = spawnCli(["receipt", barrierId, "--yaml", "--version", "1"]);
    expect(await new Promise<number>((res) => yaml.child.once("exit", (c) => res(c ?? -1)))).toBe(0);
    expect(yaml.output()).toContain("decision: stop_incomplete");
    expect(yaml.output()).toContain(`assignee: ${team.users.operator.email}`);
    expect(yaml.output()).not.toContain("unassigned");
  }, 180_000);

  test("a plain tool call is unknown whatever its executor claims afterwards: the claim is kept, not counted as proof", async () => {
    const { root } = await makeTree(team.teamId, 0);
    const silent = await addOp(team.teamId, root, { state: "running", tool: "bash", operationId: "bash-silent" });
    const reporting = await addOp(team.teamId, root, { state: "running", tool: "ticket.update", operationId: "ticket-update" });
    const { barrierId } = await killRun(team.users.operator.principal, root.runId, "stop");
    await prisma().$transaction((tx) =>
      recordLateReport(tx, {
        operationRowId: reporting.rowId,
        teamId: team.teamId,
        runId: root.runId,
        outcome: "succeeded",
        effect: { providerOperationId: "TICKET-42", detail: { field: "status" } },
        reportedBy: "key:test-agent",
      }),
    );
    const r = await receiptVersion(barrierId, 1);
    const body = r.body as Record<string, any>;
    const byOp = Object.fromEntries(body.in_flight.map((x: any) => [x.operation_id, x]));
    expect(byOp["ticket-update"].settled_state).toBe("unknown");
    expect(byOp["bash-silent"].settled_state).toBe("unknown");
    expect(body.reconciliation.map((x: any) => x.operation_id).sort()).toEqual(["bash-silent", "ticket-update"]);
    expect(body.effect_receipts).toEqual([]);
    expect(body.claims_not_verified).toEqual([
      expect.objectContaining({
        operation_id: "ticket-update",
        outcome: "succeeded",
        provider_operation_id: "TICKET-42",
        reported_by: "key:test-agent",
      }),
    ]);
    expect(body.summary.join(" ")).toContain("1 claim reported after the stop, not verified");
    expect(r.decision).toBe("stop_incomplete");
    expect((await prisma().operation.findUniqueOrThrow({ where: { id: silent.rowId } })).state).toBe("aborted_unknown");
  }, 120_000);

  test("a late claim restarts the quiet period without overturning the provider; after the receipt a claim that cancelled work ran makes it unknown in a new version", async () => {
    const { root, children } = await makeTree(team.teamId, 1);
    const job = await simc.createJob({ mode: "cancel_cleanly" });
    const inflight = await addOp(team.teamId, root, {
      state: "running",
      providerName: "deploy-slow-quiet",
      providerJobId: job.jobId,
      operationId: "deploy-quiet",
    });
    const queued = await addOp(team.teamId, children[0]!, {
      state: "queued",
      providerName: "deploy-slow-quiet",
      operationId: "queued-then-run-anyway",
    });
    const { barrierId } = await killRun(team.users.operator.principal, root.runId, "stop");
    const first = await waitFor(
      "quiet phase",
      async () => {
        const b = await prisma().barrier.findUniqueOrThrow({ where: { id: barrierId } });
        return b.phase === "quiet" && b.quietUntil ? b : null;
      },
      60_000,
      50,
    );
    expect(first.quietPeriodSeconds).toBe(2);
    // An executor that never got the cancel reports its effect during the quiet period.
    await prisma().$transaction((tx) =>
      recordLateReport(tx, {
        operationRowId: inflight.rowId,
        teamId: team.teamId,
        runId: root.runId,
        outcome: "succeeded",
        effect: { providerOperationId: "deploy-late-1" },
        reportedBy: "key:late-worker",
      }),
    );
    const after = await prisma().barrier.findUniqueOrThrow({ where: { id: barrierId } });
    expect(after.quietUntil!.getTime()).toBeGreaterThan(first.quietUntil!.getTime());
    const v1 = await receiptVersion(barrierId, 1);
    // The provider proved the effect absent; the executor's word does not overturn it.
    expect((v1.body as any).effects).toMatchObject({ completed_and_verified: 0, cancelled_without_effect: 1 });
    expect((v1.body as any).claims_not_verified).toMatchObject([{ operation_id: "deploy-quiet", provider_operation_id: "deploy-late-1" }]);
    expect(new Date(v1.verifiedAt).getTime()).toBeGreaterThanOrEqual(after.quietUntil!.getTime());
    // After the receipt: a worker ran the cancelled job anyway and reports an effect. The receipt is
    // not rewritten; a new version says so, after a fresh quiet period.
    await prisma().$transaction((tx) =>
      recordLateReport(tx, {
        operationRowId: queued.rowId,
        teamId: team.teamId,
        runId: children[0]!.runId,
        outcome: "succeeded",
        effect: { providerOperationId: "deploy-late-2" },
        reportedBy: "key:rogue-worker",
      }),
    );
    const v2 = await receiptVersion(barrierId, 2);
    // "Never started" was the record and the holder says it ran: nobody can say now, a person must.
    expect(v2.decision).toBe("stop_incomplete");
    expect((v2.body as any).effects).toMatchObject({ completed_and_verified: 0, unknown: 1 });
    expect((v2.body as any).effect_receipts).toEqual([]);
    expect((v2.body as any).claims_not_verified.map((e: any) => e.provider_operation_id).sort()).toEqual([
      "deploy-late-1",
      "deploy-late-2",
    ]);
    expect((v2.body as any).late_requests_denied).toBeGreaterThanOrEqual(2);
    expect((await getReceipt(team.users.viewer.principal, barrierId, 1)).digest).toBe(v1.digest);
    const gd = await prisma().gateDecision.findMany({ where: { runId: { in: [root.runId, children[0]!.runId] }, source: "complete" } });
    expect(gd.map((g) => g.reason).sort()).toEqual(["killed", "parent_revoked"]);
  }, 120_000);
});
