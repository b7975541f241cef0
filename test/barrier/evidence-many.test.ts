// The set-based evidence loader (lib/modules/stop/internal/evidence.ts loadEvidenceFactsManyTx, docs/fleet-stop.md#at-scale)
// against the real database: a set of barriers in diverse states — overlapping subtrees (a child's barrier
// and its root's), settlements by two barriers of one operation, unknowns with their reconciliations and
// uncertain intervals, effect receipts, acknowledgments, leases in every state, late denied requests,
// earlier receipt versions, another team's tree — loaded together gives, for each barrier, exactly the facts
// of the per-barrier ORM loader it replaced (test/support/evidence-reference.ts) and of loading it alone,
// and the same receipt digest. A row split to the wrong barrier shows up as a difference here.
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { prisma } from "../../lib/platform/db/prisma";
import { closePool } from "../../lib/platform/db/pool";
import { newId } from "../../lib/platform/ids";
import type { Prisma } from "../../lib/generated/prisma/client";
import { buildReceipt } from "../../lib/control/evidence/receipt";
import { loadEvidenceFactsManyTx, loadEvidenceFactsTx } from "../../lib/modules/stop/internal/evidence";
import { referenceEvidenceFactsTx } from "../support/evidence-reference";
import { makeRun, type FixtureRun } from "../support/fixtures";
import { addOp, makeProvider, makeTeam, type TeamFixture } from "./fixtures";

let team: TeamFixture;
let other: TeamFixture;
const barrierIds: string[] = [];
const HOUR = 3600_000;
const T0 = new Date(Date.now() - 10 * 60_000);
const at = (s: number) => new Date(T0.getTime() + s * 1000);

async function barrier(
  teamId: string,
  run: FixtureRun,
  s: { requestedAt: Date; phase?: "settling" | "quiet" | "complete"; acks?: unknown },
) {
  const id = newId("stop");
  await prisma().barrier.create({
    data: {
      id,
      teamId,
      runId: run.runId,
      requestedAt: s.requestedAt,
      requestedBy: "user:someone",
      reason: `stop ${id}`,
      newEpoch: 2,
      policy: {},
      phase: s.phase ?? "quiet",
      dispatchStoppedAt: s.requestedAt,
      queuedCancelledAt: s.requestedAt,
      runsKilled: 3,
      leasesRevoked: 2,
      queuedCancelled: 1,
      quietPeriodSeconds: 0,
      quietUntil: s.requestedAt,
      observedEvidence: s.acks === undefined ? undefined : (s.acks as object),
    },
  });
  barrierIds.push(id);
  return id;
}

async function settlement(barrierId: string, operationRowId: string, s: Partial<Prisma.SettlementUncheckedCreateInput> = {}) {
  const id = newId("set");
  await prisma().settlement.create({
    data: { id, barrierId, operationId: operationRowId, stateAtBarrier: "running", attempts: 1, ...s },
  });
  return id;
}

async function effect(operationRowId: string, teamId: string, committedAt: Date, source: string, detail: unknown) {
  await prisma().effectReceipt.create({
    data: {
      id: newId("eff"),
      teamId,
      operationId: operationRowId,
      committedAt,
      source,
      detail: detail as object,
      providerOperationId: "p-1",
    },
  });
}

async function denied(teamId: string, runId: string, when: Date, decision: "deny" | "allow" = "deny") {
  await prisma().gateDecision.create({ data: { teamId, runId, decision, reason: "killed", at: when } });
}

async function receipt(barrierId: string, version: number, digest: string) {
  await prisma().stopReceipt.create({
    data: {
      id: newId("rcpt"),
      barrierId,
      version,
      canonical: "{}",
      body: {},
      decision: version === 1 ? "stop_incomplete" : "stopped_and_quiet",
      verifiedAt: at(100 + version),
      digest,
    },
  });
}

beforeAll(async () => {
  team = await makeTeam();
  other = await makeTeam();
  await makeProvider(team.teamId, { name: "deploy", url: "http://127.0.0.1:9" });
  await makeProvider(other.teamId, { name: "other-only", url: "http://127.0.0.1:9" });

  // Tree A: root → (a1 → a11), a2. Barriers on the root (with two receipt versions) and on a1 (overlapping).
  const a = await makeRun(team.teamId, { lifecycle: "killed", lease: { revokedAt: at(1) } });
  const a1 = await makeRun(team.teamId, { lifecycle: "killed", lease: { revokedAt: at(1) } }, a);
  const a11 = await makeRun(team.teamId, { lifecycle: "killed", lease: { validUntil: new Date(Date.now() - HOUR) } }, a1);
  const a2 = await makeRun(team.teamId, {}, a);
  const bA1 = await barrier(team.teamId, a1, {
    requestedAt: at(5),
    acks: [{ runId: a11.runId, meaning: "signal_accepted", at: at(6).toISOString() }, "not an ack", { runId: a1.runId }],
  });
  const bA = await barrier(team.teamId, a, {
    requestedAt: at(10),
    phase: "complete",
    acks: [
      { runId: a11.runId, meaning: "process_terminated", at: at(12).toISOString() },
      { runId: a.runId, meaning: "turn_interrupted", at: at(11).toISOString() },
    ],
  });
  await receipt(bA, 2, "d2");
  await receipt(bA, 1, "d1");
  // Operations of tree A, created in an order that is not the id order.
  const running = await addOp(team.teamId, a11, { state: "running", providerName: "deploy", providerJobId: "job-1" });
  await settlement(bA1, running.rowId, { providerResponse: "accepted", cancelRequestedAt: at(7), effectExpected: "absence" });
  await settlement(bA, running.rowId, {
    providerResponse: "unreachable",
    lastError: "connect ECONNREFUSED",
    settledState: "unknown",
    settledAt: at(20),
    settledReason: "provider unreachable",
    attempts: 3,
  });
  await addOp(team.teamId, a, { state: "queued" });
  await addOp(team.teamId, a2, { state: "succeeded" }); // finished before any stop, never settled: not a fact
  const unknown = await addOp(team.teamId, a2, { state: "running", providerName: "nowhere" });
  await prisma().operation.update({ where: { id: unknown.rowId }, data: { state: "aborted_unknown", finishedAt: at(21) } });
  // After the one the database opened with the unknown (executor_aborted): the latest is the cause.
  for (const [cause, s] of [
    ["transport_lost", 15],
    ["target_unreachable", 16],
  ] as const) {
    await prisma().uncertainInterval.create({
      data: {
        id: newId("unc"),
        teamId: team.teamId,
        runId: a2.runId,
        operationId: unknown.rowId,
        cause,
        startedAt: new Date(Date.now() + s * 1000),
      },
    });
  }
  const resolved = await addOp(team.teamId, a1, { state: "running", providerName: "deploy" });
  await prisma().operation.update({ where: { id: resolved.rowId }, data: { state: "aborted_unknown" } });
  await prisma().reconciliation.update({
    where: { operationId: resolved.rowId },
    data: {
      status: "resolved",
      resolution: "effect_absent",
      evidence: "checked the console",
      resolvedAt: at(30),
      resolvedBy: `user:${team.users.manager.id} via key:k1`,
    },
  });
  await prisma().operation.update({ where: { id: resolved.rowId }, data: { state: "failed", finishedAt: at(30) } });
  const effected = await addOp(team.teamId, a1, { state: "succeeded" });
  await settlement(bA, effected.rowId, { settledState: "completed_and_verified", settledAt: at(18), effectObserved: "presence" });
  await effect(effected.rowId, team.teamId, at(17), "provider", { url: "https://x", n: 1, nested: { ok: true } });
  await effect(effected.rowId, team.teamId, at(17), "executor", null);
  await effect(running.rowId, team.teamId, at(16), "reconciliation", ["a", 1]);
  for (const [r, s, d] of [
    [a11, 11, "deny"],
    [a11, 4, "deny"], // before both barriers
    [a1, 8, "deny"], // after bA1, before bA
    [a2, 12, "deny"],
    [a2, 13, "allow"],
  ] as const)
    await denied(team.teamId, r.runId, at(s), d);

  // Tree B: a root without a lease and nothing in flight.
  const b = await makeRun(team.teamId, { lifecycle: "killed" });
  await prisma().lease.deleteMany({ where: { runId: b.runId } });
  await barrier(team.teamId, b, { requestedAt: at(40), phase: "settling" });

  // Tree C: a root with an active lease, a queued op of a provider another team has, and its own unknown.
  const c = await makeRun(team.teamId);
  await addOp(team.teamId, c, { state: "scheduled", providerName: "other-only" });
  const cUnknown = await addOp(team.teamId, c, { state: "running" });
  await prisma().operation.update({ where: { id: cUnknown.rowId }, data: { state: "aborted_unknown" } });
  await barrier(team.teamId, c, {
    requestedAt: at(41),
    acks: [{ runId: a.runId, meaning: "process_terminated", at: at(41).toISOString() }],
  });
  await denied(team.teamId, c.runId, at(42));

  // Tree D, another team's: the same provider name as tree A's, its own denial and acknowledgment.
  const d = await makeRun(other.teamId, { lifecycle: "killed" });
  const dOp = await addOp(other.teamId, d, { state: "running", providerName: "deploy" });
  await barrier(other.teamId, d, { requestedAt: at(43), acks: [{ runId: d.runId, meaning: "signal_accepted", at: at(44).toISOString() }] });
  await settlement(barrierIds.at(-1)!, dOp.rowId, { settledState: "cancelled_without_effect", settledAt: at(45) });
  await denied(other.teamId, d.runId, at(46));
}, 120_000);

afterAll(async () => {
  await prisma().$disconnect();
  await closePool();
});

describe("the set-based evidence loader", () => {
  test("a set of barriers loaded together: each barrier's facts are the per-barrier loader's, and its receipt digest too", async () => {
    const now = new Date();
    const { together, alone, reference } = await prisma().$transaction(
      async (tx) => ({
        // Not in requested order, and one id twice: the result is by id.
        together: await loadEvidenceFactsManyTx(tx, [...barrierIds].reverse().concat(barrierIds[0]!), now),
        alone: await (async () => {
          const out = [];
          for (const id of barrierIds) out.push(await loadEvidenceFactsTx(tx, id, now));
          return out;
        })(),
        reference: await (async () => {
          const out = [];
          for (const id of barrierIds) out.push(await referenceEvidenceFactsTx(tx, id, now));
          return out;
        })(),
      }),
      { isolationLevel: "RepeatableRead", timeout: 60_000 },
    );
    expect([...together.keys()].sort()).toEqual([...barrierIds].sort());
    barrierIds.forEach((id, i) => {
      const f = together.get(id)!;
      expect(f, `barrier ${i} against the per-barrier reference loader`).toStrictEqual(reference[i]);
      expect(f, `barrier ${i} loaded alone`).toStrictEqual(alone[i]);
      const issue = { version: f.receipts.length + 1, previousDigest: f.receipts.at(-1)?.digest ?? null, verifiedAt: now, auditHead: null };
      expect(buildReceipt(f, issue).digest).toBe(buildReceipt(alone[i]!, issue).digest);
      expect(buildReceipt(f, issue).canonical).toBe(buildReceipt(reference[i]!, issue).canonical);
    });

    // The states are the ones built (so the comparison above compares something).
    const [bA1, bA, bB, bC, bD] = barrierIds.map((id) => together.get(id)!);
    expect(bA!.runs.map((r) => r.acknowledgment?.meaning ?? null)).toEqual(["turn_interrupted", null, null, "process_terminated"]);
    expect(bA!.runs[0]!.acknowledgment).toEqual({ meaning: "turn_interrupted", at: at(11) });
    expect(bA!.runs.find((r) => r.acknowledgment?.meaning === "process_terminated")!.acknowledgment!.at).toEqual(at(6));
    expect(bA!.operations).toHaveLength(5);
    expect(bA!.operations.map((o) => o.settlement?.barrierId ?? null).filter(Boolean)).toHaveLength(2);
    expect(bA!.operations.map((o) => o.reconciliation?.cause ?? null)).toContain("target_unreachable");
    expect(bA!.operations.map((o) => o.reconciliation?.resolvedBy ?? null)).toContain(team.users.manager.email);
    expect(bA!.operations.map((o) => o.reconciliation?.assignee ?? null)).toContain(team.users.admin.email);
    expect(bA!.operations.filter((o) => o.hasProvider)).toHaveLength(2);
    expect(bA!.effectReceipts).toHaveLength(3);
    expect(bA!.receipts.map((r) => r.version)).toEqual([1, 2]);
    expect(bA!.lateRequestsDenied).toBe(2);
    expect(bA!.leases).toEqual({ rootLease: "revoked", descendantLeasesRevoked: 1, active: 1 });
    expect(bA1!.runs).toHaveLength(2);
    expect(bA1!.operations).toHaveLength(3);
    expect(bA1!.lateRequestsDenied).toBe(2);
    expect(bA1!.runs[1]!.acknowledgment?.meaning).toBe("process_terminated");
    expect(bB!).toMatchObject({ operations: [], effectReceipts: [], receipts: [], lateRequestsDenied: 0 });
    expect(bB!.leases).toEqual({ rootLease: "none", descendantLeasesRevoked: 0, active: 0 });
    expect(bC!.operations.map((o) => o.hasProvider)).toEqual([false, false]);
    expect(bC!.runs[0]!.acknowledgment).toBeNull();
    expect(bC!.leases.rootLease).toBe("active");
    expect(bD!.operations.map((o) => [o.hasProvider, o.settlement?.settledState])).toEqual([[false, "cancelled_without_effect"]]);
    expect(bD!.lateRequestsDenied).toBe(1);
  });
});
