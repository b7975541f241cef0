// Fleet stop in batches (docs/fleet-stop.md#at-scale), against the real database and the real barrier
// engine: the scope commits on its own and its coverage follows; many targets start in one kill
// transaction and the engine completes them in batches — and still every run has exactly one barrier and
// its own receipt, also when single kills race the batch on the same roots, and every batch's audit rows
// chain and verify.
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { prisma } from "../../lib/platform/db/prisma";
import { closePool } from "../../lib/platform/db/pool";
import { advancePendingStops, createStop, getStop } from "../../lib/modules/stop/stops";
import { killRun, killTargets } from "../../lib/modules/stop/kill";
import { verifyAuditChain } from "../../lib/modules/audit/audit";
import { runBarrierWorker } from "../../lib/modules/stop/engine/worker";
import { newId } from "../../lib/platform/ids";
import { waitFor } from "../../lib/platform/wait";
import { makeRun } from "../support/fixtures";
import { addOp, makeTeam, type TeamFixture } from "../barrier/fixtures";

const system = { type: "system", name: "test" } as const;
let team: TeamFixture;

beforeAll(async () => {
  team = await makeTeam();
  // The bench's setting: no quiet period, so the engine completes a barrier as soon as it is settled.
  await prisma().team.update({ where: { id: team.teamId }, data: { quietPeriodMs: 0 } });
}, 60_000);

afterAll(async () => {
  await prisma().$disconnect();
  await closePool();
});

const barriersOf = async (runIds: string[]) =>
  prisma().barrier.findMany({ where: { runId: { in: runIds } }, select: { id: true, runId: true } });

/** Runs the real engine for this team until `done` holds; returns its log. */
async function withEngine(done: () => Promise<boolean>, timeout = 60_000): Promise<string[]> {
  const ac = new AbortController();
  const lines: string[] = [];
  const engine = runBarrierWorker({
    teamId: team.teamId,
    signal: ac.signal,
    pollMs: 200,
    listen: true,
    batchSize: 5,
    log: (l) => lines.push(l),
  });
  try {
    await waitFor("the engine", async () => (await done()) || null, timeout, 100);
  } finally {
    ac.abort();
    await engine;
  }
  return lines;
}

describe("fleet stop in batches", () => {
  test("one batch: each target its own barrier and run.kill audit row; killed meanwhile → linked to its barrier; finished meanwhile → still stopped; receipts in batches", async () => {
    const runs = [];
    for (let i = 0; i < 7; i++) runs.push(await makeRun(team.teamId));
    const child = await makeRun(team.teamId, { title: "child" }, runs[0]);
    await addOp(team.teamId, { runId: runs[1]!.runId, leaseId: runs[1]!.leaseId, epoch: 1 }, { state: "queued" });
    await addOp(team.teamId, { runId: child.runId, leaseId: child.leaseId, epoch: 1 }, { state: "queued" });
    const ids = runs.map((r) => r.runId);
    const stop = await createStop(team.users.operator.principal, {
      action: "kill",
      filter: { runIds: [...ids, child.runId] },
      reason: "batch",
      dryRun: false,
    });
    // The child is covered through its parent: one target per tree.
    expect(stop).toMatchObject({ matched: 8, barriers: { total: 7, started: 0 } });
    // Between coverage and fan-out: one target killed by a single kill, one finished.
    const single = await killRun(team.users.operator.principal, ids[2]!, "by hand");
    // (As finishRun records it: the harness said the run ended.)
    await prisma().run.update({ where: { id: ids[3]! }, data: { finishedAt: new Date() } });

    const auditBefore = await prisma().auditEvent.count({ where: { teamId: team.teamId, action: "run.kill" } });
    const batch = await killTargets(system, ids, { reason: "batch", onBehalfOf: "user:x", teamId: team.teamId, scopeId: stop.stopId });
    expect(batch.started.size).toBe(6);
    expect(batch.existing.get(ids[2]!)).toBe(single.barrierId);
    expect(batch.notFound).toEqual([]);
    // One run.kill row per started barrier, chained.
    expect(await prisma().auditEvent.count({ where: { teamId: team.teamId, action: "run.kill" } })).toBe(auditBefore + 6);
    expect(await verifyAuditChain(prisma(), team.teamId)).toBeNull();
    // The whole subtree killed, its queued work cancelled; one barrier per run, never two.
    expect((await prisma().run.findUniqueOrThrow({ where: { id: child.runId } })).lifecycle).toBe("killed");
    const bs = await barriersOf(ids);
    expect(bs).toHaveLength(7);
    expect(new Set(bs.map((b) => b.runId)).size).toBe(7);
    // Repeating the batch (another engine, a retry) starts nothing new.
    const again = await killTargets(system, ids, { reason: "batch", onBehalfOf: "user:x", teamId: team.teamId, scopeId: stop.stopId });
    expect(again.started.size).toBe(0);
    expect(again.existing.size).toBe(7);

    const log = await withEngine(async () => (await getStop(team.users.operator.principal, stop.stopId)).receipt !== null);
    // The engine took them in batches (5 at most here), not one by one.
    expect(log.some((l) => /claimed a batch of [2-5]\b/.test(l))).toBe(true);
    const view = await getStop(team.users.operator.principal, stop.stopId);
    expect(view.receipt?.decision).toBe("stopped_and_quiet");
    expect(view.runs.every((r) => r.decision === "stopped_and_quiet" && r.barrierId)).toBe(true);
    const receipts = await prisma().stopReceipt.findMany({ where: { barrierId: { in: bs.map((b) => b.id) } } });
    expect(receipts).toHaveLength(7);
    expect(new Set(receipts.map((r) => r.barrierId)).size).toBe(7);
    const ops = await prisma().operation.findMany({ where: { runId: { in: [ids[1]!, child.runId] } }, select: { state: true } });
    expect(ops.map((o) => o.state)).toEqual(["cancelled_not_started", "cancelled_not_started"]);
    expect(await prisma().auditEvent.count({ where: { teamId: team.teamId, action: "barrier.receipt" } })).toBeGreaterThanOrEqual(7);
    expect(await verifyAuditChain(prisma(), team.teamId)).toBeNull();
  }, 120_000);

  test("a batch racing single kills of the same roots: one barrier and one receipt per run, never two", async () => {
    for (let round = 0; round < 3; round++) {
      const runs = [];
      for (let i = 0; i < 12; i++) runs.push(await makeRun(team.teamId));
      const ids = runs.map((r) => r.runId);
      const stop = await createStop(team.users.operator.principal, {
        action: "kill",
        filter: { runIds: ids },
        reason: `race ${round}`,
        dryRun: false,
      });
      const singles = ids.filter((_, i) => i % 2 === round % 2);
      const [, ...answers] = await Promise.all([
        advancePendingStops(system, team.teamId),
        ...singles.map((id) => killRun(team.users.operator.principal, id, "racing the batch")),
      ]);
      const bs = await barriersOf(ids);
      expect(bs).toHaveLength(12);
      const byRun = new Map(bs.map((b) => [b.runId, b.id]));
      // Each single kill answered the run's one barrier, whoever started it.
      singles.forEach((id, i) => expect(answers[i]!.barrierId).toBe(byRun.get(id)));
      const view = await getStop(team.users.operator.principal, stop.stopId);
      expect(view.barriers).toMatchObject({ total: 12, started: 12, failed: 0 });
      for (const r of view.runs) expect(r.barrierId).toBe(byRun.get(r.runId));
      await withEngine(async () => (await getStop(team.users.operator.principal, stop.stopId)).receipt !== null);
      const receipts = await prisma().stopReceipt.findMany({
        where: { barrierId: { in: bs.map((b) => b.id) } },
        select: { barrierId: true },
      });
      expect(receipts).toHaveLength(12);
      expect((await getStop(team.users.operator.principal, stop.stopId)).receipt?.decision).toBe("stopped_and_quiet");
    }
    expect(await verifyAuditChain(prisma(), team.teamId)).toBeNull();
  }, 180_000);

  test("the scope commits before its coverage: a kill scope without recorded coverage has no fleet receipt; the engine records it and stops its runs", async () => {
    const a = await makeRun(team.teamId);
    const b = await makeRun(team.teamId);
    // As if the request died right after the scope's commit, before its coverage.
    const stopId = newId("scope");
    await prisma().$executeRawUnsafe(
      `INSERT INTO stop_scopes (id, team_id, action, filter, f_run_ids, reason, requested_by, created_at)
       VALUES ($1, $2, 'kill', $3::jsonb, $4::text[], 'died', 'user:x', clock_timestamp())`,
      stopId,
      team.teamId,
      JSON.stringify({ runIds: [a.runId, b.runId] }),
      [a.runId, b.runId],
    );
    // Dispatch is already stopped for both (the gate reads the scope). The engine leaves a young scope's
    // coverage to its request, and issues no fleet receipt meanwhile: no targets yet is not "no targets".
    expect(await advancePendingStops(system, team.teamId)).toBe(0);
    const before = await getStop(team.users.operator.principal, stopId);
    expect(before).toMatchObject({ matched: 0, barriers: { total: 0 }, receipt: null });
    // Its request is gone for good (10 s later nobody else will record it): the engine does.
    await prisma().$executeRawUnsafe(`UPDATE stop_scopes SET created_at = created_at - interval '11 seconds' WHERE id = $1`, stopId);
    expect(await advancePendingStops(system, team.teamId)).toBe(2);
    const after = await getStop(team.users.operator.principal, stopId);
    expect(after).toMatchObject({ matched: 2, barriers: { total: 2, started: 2 } });
    await withEngine(async () => (await getStop(team.users.operator.principal, stopId)).receipt !== null);
    expect((await getStop(team.users.operator.principal, stopId)).receipt?.decision).toBe("stopped_and_quiet");
  }, 120_000);
});
