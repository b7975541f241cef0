// The barrier engine's set-based steps (lib/modules/stop/engine/quiet.ts enterQuiet, complete.ts completeBarriers,
// docs/fleet-stop.md#at-scale) against the real database: one batch holding a barrier for every outcome
// — not ours or not in the step's phase ("lost"), an own settlement open ("pending"), a child's operation
// in flight ("subtree"), quiet (the providers' period or the team's) — gets, per barrier, the outcome and
// the row values of the one-barrier step; the completion issues each due receipt (its own version, the
// model's bytes, signed), sends one still in flight back to settling, leaves one waiting, and appends the
// audit rows to a chain that verifies.
import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { prisma } from "../../lib/platform/db/prisma";
import { closePool } from "../../lib/platform/db/pool";
import { newId } from "../../lib/platform/ids";
import { enterQuiet } from "../../lib/modules/stop/engine/quiet";
import { completeBarriers } from "../../lib/modules/stop/engine/complete";
import { verifyAuditChain } from "../../lib/modules/audit/audit";
import { makeRun, type FixtureRun } from "../support/fixtures";
import { addOp, makeProvider, makeTeam, type TeamFixture } from "./fixtures";

const system = { type: "system", name: "test" } as const;
let team: TeamFixture;
const W = "worker-batch";
const past = (s: number) => new Date(Date.now() - s * 1000);

async function barrier(run: FixtureRun, s: { phase?: "settling" | "quiet"; claimedBy?: string; lastSettledAt?: Date } = {}) {
  const id = newId("stop");
  await prisma().barrier.create({
    data: {
      id,
      teamId: team.teamId,
      runId: run.runId,
      requestedAt: past(60),
      requestedBy: "system:test",
      reason: "batch test",
      newEpoch: 2,
      policy: {},
      phase: s.phase ?? "settling",
      dispatchStoppedAt: past(59),
      queuedCancelledAt: past(59),
      lastSettledAt: s.lastSettledAt ?? null,
      claimedBy: s.claimedBy ?? W,
      claimExpiresAt: new Date(Date.now() + 60_000),
    },
  });
  return id;
}

beforeAll(async () => {
  team = await makeTeam();
  await prisma().team.update({ where: { id: team.teamId }, data: { quietPeriodMs: 1500 } });
  await makeProvider(team.teamId, { name: "slow", url: "http://127.0.0.1:9", quietPeriodSeconds: 7 });
}, 60_000);

afterAll(async () => {
  await prisma().$disconnect();
  await closePool();
});

describe("the engine's set-based steps", () => {
  test("quiet and complete for a batch: each barrier's own outcome and row values", async () => {
    const lostPhase = await barrier(await makeRun(team.teamId, { lifecycle: "killed" }), { phase: "quiet" });
    const lostClaim = await barrier(await makeRun(team.teamId, { lifecycle: "killed" }), { claimedBy: "another-worker" });
    const pendingRun = await makeRun(team.teamId, { lifecycle: "killed" });
    const pending = await barrier(pendingRun);
    const open = await addOp(team.teamId, pendingRun, { state: "running" });
    await prisma().settlement.create({
      data: { id: newId("set"), barrierId: pending, operationId: open.rowId, stateAtBarrier: "running" },
    });
    const subRoot = await makeRun(team.teamId, { lifecycle: "killed" });
    const subtree = await barrier(subRoot);
    await addOp(team.teamId, await makeRun(team.teamId, { lifecycle: "killed" }, subRoot), { state: "running" });
    const slowRun = await makeRun(team.teamId, { lifecycle: "killed" });
    const slow = await barrier(slowRun);
    const settled = await addOp(team.teamId, slowRun, { state: "succeeded", providerName: "slow" });
    const settledAt = past(30);
    await prisma().settlement.create({
      data: {
        id: newId("set"),
        barrierId: slow,
        operationId: settled.rowId,
        stateAtBarrier: "running",
        settledState: "completed_and_verified",
        settledAt,
      },
    });
    await prisma().gateDecision.create({
      data: { teamId: team.teamId, runId: slowRun.runId, decision: "deny", reason: "killed", at: past(10) },
    });
    await prisma().gateDecision.create({
      data: { teamId: team.teamId, runId: slowRun.runId, decision: "deny", reason: "killed", at: past(120) },
    });
    const earlier = past(40);
    const plain = await barrier(await makeRun(team.teamId, { lifecycle: "killed", lease: { revokedAt: past(59) } }), {
      lastSettledAt: earlier,
    });
    const laterRun = await makeRun(team.teamId, { lifecycle: "killed" });
    const later = await barrier(laterRun);

    const before = Date.now();
    const q = await enterQuiet(system, [lostPhase, lostClaim, pending, subtree, slow, plain, later], W);
    const after = Date.now();
    expect([lostPhase, lostClaim, pending, subtree].map((id) => q.get(id))).toEqual(["lost", "lost", "pending", "subtree"]);
    const rows = new Map((await prisma().barrier.findMany({ where: { teamId: team.teamId } })).map((b) => [b.id, b]));
    for (const id of [lostPhase, lostClaim, pending, subtree]) {
      expect(rows.get(id)!.quietUntil, id).toBeNull();
      expect(rows.get(id)!.phase).toBe(id === lostPhase ? "quiet" : "settling");
    }
    // The provider's 7 s beats the team's 1.5 s; quiesced at the last settlement under the run.
    const s = rows.get(slow)!;
    expect(s).toMatchObject({
      phase: "quiet",
      quietPeriodSeconds: 7,
      quiescedAt: settledAt,
      lastSettledAt: settledAt,
      lateRequestsDenied: 1,
    });
    expect((q.get(slow) as { quietUntil: Date }).quietUntil).toEqual(s.quietUntil);
    expect(s.quietUntil!.getTime()).toBeGreaterThanOrEqual(before + 7000);
    expect(s.quietUntil!.getTime()).toBeLessThanOrEqual(after + 7000);
    // Nothing settled: the team's period, quiesced when dispatch stopped, the last settlement kept.
    const p = rows.get(plain)!;
    expect(p).toMatchObject({
      phase: "quiet",
      quietPeriodSeconds: 1.5,
      quiescedAt: p.dispatchStoppedAt,
      lastSettledAt: earlier,
      lateRequestsDenied: 0,
    });

    // The quiet periods over for `plain` and `later`; `later` has work in flight again.
    await prisma().barrier.updateMany({ where: { id: { in: [plain, later] } }, data: { quietUntil: past(1) } });
    await addOp(team.teamId, laterRun, { state: "queued" });
    const c = await completeBarriers(system, [slow, plain, later, lostClaim], W);
    expect(c.get(slow)).toBe("waiting");
    expect(c.get(later)).toBe("pending");
    expect(c.get(lostClaim)).toBe("lost");
    expect(c.get(plain)).toMatchObject({ version: 1, decision: "stopped_and_quiet" });
    const done = await prisma().barrier.findMany({ where: { id: { in: [slow, plain, later] } } });
    expect(Object.fromEntries(done.map((b) => [b.id, [b.phase, b.claimedBy]]))).toEqual({
      [slow]: ["quiet", W],
      [plain]: ["complete", null],
      [later]: ["settling", W],
    });
    const receipts = await prisma().stopReceipt.findMany({ where: { barrier: { teamId: team.teamId } } });
    expect(receipts.map((r) => [r.barrierId, r.version, r.decision])).toEqual([[plain, 1, "stopped_and_quiet"]]);
    const r = receipts[0]!;
    // The stored body is the canonical text's with its digest (sha256 of that text), and the barrier carries the receipt's decision.
    expect(r.body).toEqual({ ...JSON.parse(r.canonical), digest: r.digest });
    expect(createHash("sha256").update(r.canonical).digest("hex")).toBe(r.digest);
    expect(r.envelope).toMatchObject({ payloadType: expect.any(String), signatures: [expect.objectContaining({ keyid: r.keyId })] });
    expect(done.find((b) => b.id === plain)!.decision).toBe("stopped_and_quiet");
    const audits = await prisma().auditEvent.findMany({ where: { teamId: team.teamId, action: "barrier.receipt" } });
    expect(audits.map((a) => a.target)).toEqual([plain]);
    expect(await prisma().$transaction((tx) => verifyAuditChain(tx, team.teamId))).toBeNull();
  });
});
