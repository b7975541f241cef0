// The kill = barrier transaction (docs/architecture.md#the-cancellation-barrier) against the real database and the real gate function.
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { prisma } from "../../lib/platform/db/prisma";
import { killRun } from "../../lib/modules/stop/kill";
import { createApiKey } from "../../lib/modules/keys/api-keys";
import { hashKeySecret } from "../../lib/platform/auth/api-key";
import { admitCheck, gateCheck, heartbeatCheck } from "../../lib/modules/gate/statement";
import { getBarrierView } from "../../lib/modules/stop/barriers";
import { addOp, makeTeam, makeTree, type TeamFixture } from "./fixtures";
import { closePool } from "../../lib/platform/db/pool";
import type { Principal } from "../../lib/platform/auth/principal";

let team: TeamFixture;
let other: TeamFixture;
beforeAll(async () => {
  team = await makeTeam();
  other = await makeTeam();
});
afterAll(async () => {
  await prisma().$disconnect();
  await closePool();
});

describe("killRun authorization", () => {
  test("machine keys and viewers are refused (403); another team's run is not found (404); bad reason is 400; nothing changes", async () => {
    const tree = await makeTree(team.teamId, 1);
    const system = { type: "system", name: "test" } as const;
    const agent = await createApiKey(system, { teamId: team.teamId, kind: "agent", name: "a" });
    const agentP: Principal = { type: "key", keyId: agent.id, teamId: team.teamId, kind: "agent", scopes: [], userId: null, role: null };
    await expect(killRun(agentP, tree.root.runId, "stop")).rejects.toMatchObject({ code: "forbidden" });
    await expect(killRun(team.users.viewer.principal, tree.root.runId, "stop")).rejects.toMatchObject({ code: "forbidden" });
    await expect(killRun(other.users.admin.principal, tree.root.runId, "stop")).rejects.toMatchObject({ code: "not_found" });
    await expect(killRun(team.users.operator.principal, tree.root.runId, "  ")).rejects.toMatchObject({
      code: "bad_request",
      message: expect.stringContaining("reason"),
    });
    await expect(killRun(team.users.operator.principal, "run_missing", "stop")).rejects.toMatchObject({ code: "not_found" });
    // Ids are escaped into the opening statement: quotes, backslashes and NUL bytes name no run.
    for (const odd of [`${tree.root.runId}' OR '1'='1`, "run_\\'x", "run_\0x", ""])
      await expect(killRun(team.users.operator.principal, odd, "stop")).rejects.toMatchObject({ code: "not_found" });
    const run = await prisma().run.findUniqueOrThrow({ where: { id: tree.root.runId } });
    expect(run.lifecycle).toBe("normal");
    expect(await prisma().barrier.count({ where: { runId: tree.root.runId } })).toBe(0);
  });
});

describe("the barrier transaction", () => {
  test("kills the tree, bumps epochs, revokes leases, cancels queued/scheduled/retry work (kept), one settlement per running op", async () => {
    const { root, children } = await makeTree(team.teamId, 2);
    const [c1, c2] = children as [(typeof children)[0], (typeof children)[0]];
    const q1 = await addOp(team.teamId, root, { state: "queued" });
    const q2 = await addOp(team.teamId, c1, { state: "queued" });
    const sched = await addOp(team.teamId, c2, { state: "scheduled", kind: "scheduled" });
    const retry = await addOp(team.teamId, c1, { state: "scheduled", kind: "retry" });
    const run1 = await addOp(team.teamId, root, { state: "running", providerName: "deploy-sim", providerJobId: "preview-7712" });
    const run2 = await addOp(team.teamId, c2, { state: "running" });
    const done = await addOp(team.teamId, root, { state: "succeeded" });

    const r = await killRun(team.users.operator.principal, root.runId, "wrong_commit_detected");
    expect(r.created).toBe(true);
    expect(r.barrierId).toMatch(/^stop_/);

    const runs = await prisma().run.findMany({ where: { rootRunId: root.runId } });
    expect(runs.map((x) => [x.lifecycle, x.epoch])).toEqual(runs.map(() => ["killed", 2]));
    const leases = await prisma().lease.findMany({ where: { runId: { in: runs.map((x) => x.id) } } });
    expect(leases).toHaveLength(3);
    for (const l of leases) {
      expect(l.revokedAt).not.toBeNull();
      expect(l.revokedBy).toBe(r.barrierId);
    }

    const ops = new Map((await prisma().operation.findMany({ where: { runId: { in: runs.map((x) => x.id) } } })).map((o) => [o.id, o]));
    expect(ops.get(q1.rowId)).toMatchObject({ state: "cancelled_not_started", stateReason: "killed" });
    expect(ops.get(q2.rowId)).toMatchObject({ state: "cancelled_not_started", stateReason: "parent_revoked" });
    expect(ops.get(sched.rowId)).toMatchObject({ state: "cancelled_not_started", stateReason: "stale_epoch" });
    expect(ops.get(retry.rowId)).toMatchObject({ state: "cancelled_not_started", stateReason: "stale_epoch" });
    expect(ops.get(run1.rowId)!.state).toBe("running");
    expect(ops.get(done.rowId)!.state).toBe("succeeded");

    const b = await prisma().barrier.findUniqueOrThrow({ where: { id: r.barrierId }, include: { settlements: true } });
    expect(b).toMatchObject({
      phase: "revoking",
      newEpoch: 2,
      runsKilled: 3,
      leasesRevoked: 3,
      queuedCancelled: 2,
      scheduledCancelled: 1,
      retriesCancelled: 1,
      inFlight: 2,
      requestedBy: `user:${team.users.operator.id}`,
      reason: "wrong_commit_detected",
    });
    expect(b.policy).toMatchObject({
      revoke: { root_lease: root.leaseId, descendants: true, new_revocation_epoch: 2 },
      completion_rule: { pending_calls: 0, unknown_outcomes: 0, active_leases: 0 },
    });
    expect(b.dispatchStoppedAt).not.toBeNull();
    expect(b.queuedCancelledAt).not.toBeNull();
    expect(b.settlements.map((s) => s.operationId).sort()).toEqual([run1.rowId, run2.rowId].sort());
    expect(b.settlements.every((s) => s.stateAtBarrier === "running" && s.settledState === null)).toBe(true);

    const audit = await prisma().auditEvent.findFirst({ where: { teamId: team.teamId, action: "run.kill", target: root.runId } });
    expect(audit?.after).toMatchObject({ barrierId: r.barrierId, lifecycle: "killed" });

    // Killing again — the root or any run of the killed tree — returns the open barrier.
    expect(await killRun(team.users.manager.principal, root.runId, "again")).toEqual({ barrierId: r.barrierId, created: false });
    expect(await killRun(team.users.manager.principal, c1.runId, "child too")).toEqual({ barrierId: r.barrierId, created: false });
    expect(await prisma().barrier.count({ where: { teamId: team.teamId, runId: { in: runs.map((x) => x.id) } } })).toBe(1);

    // The ladder reads honestly: nobody acknowledged yet, so observed is pending — never stopped.
    const view = await getBarrierView(team.users.viewer.principal, r.barrierId);
    expect(view.ladder.observed_by_target!.status).toBe("pending");
    expect(view.ladder.new_work_prevented!.status).toBe("done");
    expect(view.ladder.queued_work_cancelled!.status).toBe("done");
    expect(view.ladder.execution_quiesced!.status).toBe("pending");
    expect(view.counts).toMatchObject({ inFlight: 2, pending: 2, queuedCancelled: 2 });
    await expect(getBarrierView(other.users.admin.principal, r.barrierId)).rejects.toMatchObject({ code: "not_found" });
  });

  test("killing a child stops only its subtree; the parent keeps its authority", async () => {
    const { root, children } = await makeTree(team.teamId, 2);
    const child = children[0]!;
    const rootQueued = await addOp(team.teamId, root, { state: "queued" });
    const childQueued = await addOp(team.teamId, child, { state: "queued" });
    const r = await killRun(team.users.admin.principal, child.runId, "child misbehaves");
    const runs = new Map((await prisma().run.findMany({ where: { rootRunId: root.runId } })).map((x) => [x.id, x]));
    expect(runs.get(root.runId)!.lifecycle).toBe("normal");
    expect(runs.get(children[1]!.runId)!.lifecycle).toBe("normal");
    expect(runs.get(child.runId)).toMatchObject({ lifecycle: "killed", epoch: 2 });
    expect((await prisma().operation.findUniqueOrThrow({ where: { id: rootQueued.rowId } })).state).toBe("queued");
    expect((await prisma().operation.findUniqueOrThrow({ where: { id: childQueued.rowId } })).stateReason).toBe("killed");
    const b = await prisma().barrier.findUniqueOrThrow({ where: { id: r.barrierId } });
    expect(b).toMatchObject({ runId: child.runId, runsKilled: 1, leasesRevoked: 1, queuedCancelled: 1 });
    // Killing the parent later opens its own barrier over the rest of the tree.
    const parent = await killRun(team.users.admin.principal, root.runId, "now all of it");
    expect(parent.created).toBe(true);
    expect(parent.barrierId).not.toBe(r.barrierId);
  });

  test("after the kill every gate, admit and heartbeat under the old tree is denied and recorded; a retry firing later is stale_epoch", async () => {
    const { root, children } = await makeTree(team.teamId, 1);
    const child = children[0]!;
    const system = { type: "system", name: "test" } as const;
    const worker = await createApiKey(system, { teamId: team.teamId, kind: "worker", name: "w" });
    const keyHash = hashKeySecret(worker.secret);
    const retry = await addOp(team.teamId, child, { state: "scheduled", kind: "retry" });
    const queued = await addOp(team.teamId, child, { state: "queued" });
    const running = await addOp(team.teamId, root, { state: "running" });
    const r = await killRun(team.users.operator.principal, root.runId, "stop");

    const g = await gateCheck({
      keyHash,
      runId: child.runId,
      leaseId: child.leaseId,
      epoch: 1,
      operationId: "new-call-after-kill",
      tool: "ticket.update",
    });
    expect(g).toMatchObject({ ok: true, decision: "deny", reason: "parent_revoked" });
    expect(await admitCheck({ keyHash, operationId: retry.operationId, leaseId: root.leaseId })).toMatchObject({
      ok: true,
      decision: "deny",
      reason: "stale_epoch",
    });
    expect(await admitCheck({ keyHash, operationId: queued.operationId, leaseId: root.leaseId })).toMatchObject({
      ok: true,
      decision: "deny",
      reason: "parent_revoked",
    });
    expect(await heartbeatCheck({ keyHash, operationId: running.operationId, leaseId: root.leaseId })).toMatchObject({
      ok: true,
      continue: false,
    });

    const denies = await prisma().gateDecision.findMany({ where: { runId: { in: [root.runId, child.runId] }, decision: "deny" } });
    expect(denies.length).toBeGreaterThanOrEqual(4);
    const view = await getBarrierView(team.users.operator.principal, r.barrierId);
    expect(view.counts.lateRequestsDenied).toBe(denies.length);
    expect(view.ladder.new_work_prevented!.evidence.late_requests_denied).toBe(denies.length);
  });
});
