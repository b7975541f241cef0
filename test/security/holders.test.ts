// Trust inside a team (docs/security/authorization.md#holders): only the holder of a piece of work reports on it, a
// late report is a claim and never a settlement, finishing ends authority and is no way out of a stop,
// and a killed session does not come back as a new root. Each finding is driven as a hostile agent of
// the same team would, over real HTTP against the real route handlers, PostgreSQL and barrier engine.
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { prisma } from "../../lib/platform/db/prisma";
import { closePool } from "../../lib/platform/db/pool";
import { createApiKey } from "../../lib/modules/keys/api-keys";
import { runBarrierWorker } from "../../lib/modules/stop/engine/worker";
import { setTeamStopSettings } from "../../lib/modules/members/team-settings";
import { QuiesceClient } from "../../lib/agent/sdk/client";
import { startApiServer, type ApiServer } from "../support/api-server";
import { makeTeam, waitFor, type TeamFixture } from "../barrier/fixtures";

const system = { type: "system", name: "holders-test" } as const;
let api: ApiServer;
let team: TeamFixture;
let a: QuiesceClient; // the holder
let b: QuiesceClient; // another agent key of the same team
let operator: QuiesceClient;
const ac = new AbortController();
let engine: Promise<void>;

beforeAll(async () => {
  api = await startApiServer();
  team = await makeTeam();
  await setTeamStopSettings(system, team.teamId, { quietPeriodMs: 300 });
  const key = async (kind: "agent" | "operator", name: string, userId?: string) =>
    (await createApiKey(system, { teamId: team.teamId, kind, name, ...(userId ? { userId } : {}) })).secret;
  const client = (apiKey: string) => new QuiesceClient({ url: api.url, apiKey, timeoutMs: 20_000 });
  a = client(await key("agent", "agent A"));
  b = client(await key("agent", "agent B"));
  operator = client(await key("operator", "operator", team.users.operator.id));
  engine = runBarrierWorker({ teamId: team.teamId, signal: ac.signal, pollMs: 200, claimMs: 3000, localSettleMs: 300, listen: true });
}, 120_000);

afterAll(async () => {
  ac.abort();
  await engine;
  await api?.close();
  await prisma().$disconnect();
  await closePool();
});

const refusal = (p: Promise<unknown>) =>
  p.then(
    () => ({ status: 200 }) as { status: number; code?: string },
    (e) => e,
  );

async function stopState(barrierId: string) {
  const receipts = await prisma().stopReceipt.findMany({ where: { barrierId }, orderBy: { version: "asc" } });
  const settlements = await prisma().settlement.findMany({ where: { barrierId }, orderBy: { id: "asc" } });
  const recs = await prisma().reconciliation.findMany({ where: { settlementId: { in: settlements.map((s) => s.id) } } });
  const barrier = await prisma().barrier.findUniqueOrThrow({ where: { id: barrierId } });
  return JSON.stringify({
    receipts: receipts.map((r) => [r.version, r.decision, r.digest]),
    settlements: settlements.map((s) => [s.settledState, s.settledReason]),
    recs: recs.map((r) => [r.status, r.resolvedBy, r.resolution]),
    quietUntil: barrier.quietUntil,
    observed: barrier.observedEvidence,
  });
}

async function firstReceipt(barrierId: string) {
  return waitFor("receipt v1", async () => prisma().stopReceipt.findFirst({ where: { barrierId, version: 1 } }), 60_000, 100);
}

describe("only the holder may witness, and a late report is a claim", () => {
  test("another agent key's forged completion is refused and changes nothing; the holder's is kept once as a claim", async () => {
    const run = await a.createRun({ taskId: "holders-forge" });
    const op = `forge-${run.runId}`;
    expect(await a.gate({ runId: run.runId, leaseId: run.leaseId, epoch: run.epoch, operationId: op, tool: "deploy" })).toMatchObject({
      decision: "allow",
    });
    const { barrierId } = await operator.kill(run.runId, "incident");
    const v1 = await firstReceipt(barrierId);
    expect(v1.decision).toBe("stop_incomplete");
    const rec = await prisma().reconciliation.findFirstOrThrow({ where: { operation: { operationId: op } } });
    expect(rec.status).not.toBe("resolved");
    const before = await stopState(barrierId);

    // B never touched the run: its report is not evidence of anything.
    for (let i = 0; i < 3; i++) {
      const err = await refusal(b.complete(op, { outcome: "succeeded", effect: { providerOperationId: "forged", detail: { by: "B" } } }));
      expect(err).toMatchObject({ status: 403, code: "forbidden" });
    }
    expect(await refusal(b.reportObserved(run.runId, { meaning: "process_terminated" }))).toMatchObject({ status: 403 });
    expect(await stopState(barrierId)).toBe(before);
    expect(await prisma().operationClaim.count({ where: { operation: { operationId: op } } })).toBe(0);
    expect(await prisma().effectReceipt.count({ where: { operation: { operationId: op } } })).toBe(0);

    // The holder's late report, twelve times: one claim; the person's reconciliation stays theirs.
    for (let i = 0; i < 12; i++) {
      const err = await refusal(a.complete(op, { outcome: "succeeded", effect: { providerOperationId: "deploy-77" } }));
      expect(err).toMatchObject({ status: 409, code: "conflict" });
    }
    expect(await prisma().operationClaim.findMany({ where: { operation: { operationId: op } } })).toMatchObject([
      { outcome: "succeeded", providerOperationId: "deploy-77" },
    ]);
    expect(await prisma().effectReceipt.count({ where: { operation: { operationId: op } } })).toBe(0);
    const after = await prisma().reconciliation.findUniqueOrThrow({ where: { id: rec.id } });
    expect(after).toMatchObject({ status: rec.status, resolvedBy: null, resolution: null });
    // The one new claim earns one new version that shows it; the repeats earn none.
    const v2 = await waitFor("receipt v2", async () => prisma().stopReceipt.findFirst({ where: { barrierId, version: 2 } }), 60_000, 100);
    expect(v2.decision).toBe("stop_incomplete");
    const body = v2.body as { claims_not_verified: unknown[]; effects: Record<string, number> };
    expect(body.claims_not_verified).toMatchObject([{ operation_id: op, outcome: "succeeded", provider_operation_id: "deploy-77" }]);
    expect(body.effects).toMatchObject({ unknown: 1, reconciled_by_person: 0, completed_and_verified: 0 });
    const settled = await stopState(barrierId);
    await refusal(a.complete(op, { outcome: "succeeded", effect: { providerOperationId: "deploy-77" } }));
    await new Promise((r) => setTimeout(r, 1200)); // longer than the quiet period: a restart would show
    expect(await stopState(barrierId)).toBe(settled);
  }, 120_000);
});

describe("finished is not a way out", () => {
  test("finishing with work running is refused; abandon settles it; the gate denies a finished run", async () => {
    const run = await a.createRun({ taskId: "holders-finish" });
    const op = `fin-${run.runId}`;
    await a.gate({ runId: run.runId, leaseId: run.leaseId, epoch: run.epoch, operationId: op, tool: "deploy" });
    expect(await refusal(b.finish(run.runId))).toMatchObject({ status: 403 });
    expect(await refusal(a.finish(run.runId))).toMatchObject({ status: 409, code: "conflict" });
    expect((await prisma().run.findUniqueOrThrow({ where: { id: run.runId } })).finishedAt).toBeNull();
    expect(await a.finish(run.runId, { abandon: true })).toMatchObject({ finished: 1, abandoned: 1 });
    const row = await prisma().operation.findFirstOrThrow({ where: { operationId: op }, include: { reconciliation: true } });
    expect(row.state).toBe("aborted_unknown");
    expect(row.reconciliation).not.toBeNull();
    const g = await a.gate({ runId: run.runId, leaseId: run.leaseId, epoch: run.epoch, operationId: `${op}-2`, tool: "deploy" });
    expect(g).toMatchObject({ decision: "deny", reason: "finished" });
    const reg = await refusal(
      a.registerOperation({ runId: run.runId, leaseId: run.leaseId, epoch: run.epoch, operationId: `${op}-q`, kind: "queued", tool: "t" }),
    );
    expect(reg).toMatchObject({ status: 409 });
  });

  test("a fleet kill covers a finished run whose work is still running, and its receipt accounts for it", async () => {
    const run = await a.createRun({ taskId: "holders-fleet" });
    const op = `fleet-${run.runId}`;
    await a.gate({ runId: run.runId, leaseId: run.leaseId, epoch: run.epoch, operationId: op, tool: "deploy" });
    // A run finished while its call ran (as the API allowed before, or a harness that crashed mid-call).
    await prisma().run.update({ where: { id: run.runId }, data: { finishedAt: new Date() } });
    const stop = (await operator.createStop({ action: "kill", filter: { runIds: [run.runId] }, reason: "fleet incident" })) as {
      stopId: string;
      matched: number;
    };
    expect(stop.matched).toBe(1);
    const view = await waitFor(
      "fleet receipt",
      async () => {
        const v = await operator.getStop(stop.stopId);
        return v.receipt ? v : null;
      },
      60_000,
      200,
    );
    expect(view.receipt!.decision).toBe("stop_incomplete");
    expect(view.barriers).toMatchObject({ total: 1 });
    const settlement = await prisma().settlement.findFirstOrThrow({ where: { operation: { operationId: op } } });
    expect(settlement.settledState).toBe("unknown");
  }, 120_000);
});

describe("agent keys are separated", () => {
  test("a same-team key cannot read lease ids, register a child, heartbeat, complete, observe or finish another key's run", async () => {
    const run = await a.createRun({ taskId: "holders-separate" });
    expect((await b.getRun(run.runId)).leases.map((l) => l.leaseId)).toEqual([null]);
    expect((await a.getRun(run.runId)).leases.map((l) => l.leaseId)).toEqual([run.leaseId]);
    const before = await prisma().run.count({ where: { teamId: team.teamId } });
    expect(await refusal(b.createRun({ taskId: "holders-child", parentRunId: run.runId }))).toMatchObject({ status: 403 });
    expect(await prisma().run.count({ where: { teamId: team.teamId } })).toBe(before);
    const op = `sep-${run.runId}`;
    await a.gate({ runId: run.runId, leaseId: run.leaseId, epoch: run.epoch, operationId: op, tool: "t" });
    expect(await refusal(b.heartbeat(op))).toMatchObject({ status: 403 });
    for (let i = 0; i < 6; i++) expect(await refusal(b.complete(op, { outcome: "failed" }))).toMatchObject({ status: 403 });
    expect(await refusal(b.finish(run.runId))).toMatchObject({ status: 403 });
    expect(await prisma().run.findUniqueOrThrow({ where: { id: run.runId } })).toMatchObject({ breakerFailures: 0, finishedAt: null });
    expect((await prisma().operation.findFirstOrThrow({ where: { operationId: op } })).state).toBe("running");
    // With the capability the holder passed on (the lease), the same key may act: a worker's path.
    expect(await b.heartbeat(op, { leaseId: run.leaseId })).toMatchObject({ continue: true });
    const child = await b.createRun({ taskId: "holders-child", parentLeaseId: run.leaseId });
    expect(child.parentRunId).toBe(run.runId);
    expect(await b.complete(op, { outcome: "succeeded", leaseId: run.leaseId })).toMatchObject({ state: "succeeded" });
  });
});

describe("a killed session does not come back", () => {
  test("session and thread identities of a killed run resolve to it whatever agent or parent is named; a fork of it is refused", async () => {
    const s = `sess-${Date.now()}`;
    const killed = await a.createRun({ taskId: "holders-session", harness: "claude_code", native: { sessionId: s, agentId: "sub-1" } });
    const live = await a.createRun({ taskId: "holders-other" });
    await operator.kill(killed.runId, "kill the session");
    const fork = await refusal(a.createRun({ taskId: "holders-fork", harness: "claude_code", forkedFrom: { sessionId: s } }));
    expect(fork).toMatchObject({ status: 409 });
    const again = [
      await a.createRun({ taskId: "x", harness: "claude_code", native: { sessionId: s } }),
      await a.createRun({ taskId: "x", harness: "claude_code", native: { sessionId: s, agentId: "sub-1" }, parentRunId: live.runId }),
      await a.createRun({ taskId: "x", harness: "claude_code", native: { sessionId: s, agentId: "sub-2" } }),
    ];
    for (const r of again) {
      expect(r).toMatchObject({ runId: killed.runId, created: false });
      const g = await a.gate({
        runId: r.runId,
        leaseId: r.leaseId,
        epoch: r.epoch,
        operationId: `res-${r.runId}-${Math.random()}`,
        tool: "t",
      });
      expect(g.decision).toBe("deny");
    }
    expect(await refusal(b.createRun({ taskId: "x", harness: "claude_code", native: { sessionId: s } }))).toMatchObject({ status: 409 });
    // A Codex thread the same way.
    const t = `thread-${Date.now()}`;
    const thread = await a.createRun({ taskId: "holders-thread", harness: "codex", native: { threadId: t } });
    await operator.kill(thread.runId, "kill the thread");
    expect(await a.createRun({ taskId: "x", harness: "codex", native: { threadId: t } })).toMatchObject({
      runId: thread.runId,
      created: false,
    });
    expect(await refusal(a.createRun({ taskId: "x", harness: "codex", forkedFrom: { threadId: t } }))).toMatchObject({ status: 409 });
    expect(await prisma().run.count({ where: { teamId: team.teamId, OR: [{ nativeSessionId: s }, { nativeThreadId: t }] } })).toBe(2);
  });
});
