// Restart on settled ground, against the real engine process, provider-sim and the API server: refused while
// the receipt is not quiet or a recovery is owed (409 naming it), then a new root for the same task that keeps
// the old holder and inherits the ledger — a completed call answers already_applied, a cancelled one runs again.
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { prisma } from "../../lib/platform/db/prisma";
import { closePool } from "../../lib/platform/db/pool";
import { startSimProvider, type SimServer } from "../../lib/modules/stop/providers/sim-server";
import { SimProviderClient } from "../../lib/modules/stop/providers/sim-client";
import { createApiKey } from "../../lib/modules/keys/api-keys";
import { recordRecovery } from "../../lib/modules/stop/recovery";
import { QuiesceClient } from "../../lib/agent/sdk/client";
import { QuiesceApiError } from "../../lib/agent/sdk/errors";
import { replayedOperationId } from "../../lib/control/restart";
import { startApiServer, type ApiServer } from "../support/api-server";
import { makeProvider, makeTeam, receiptsOf, startWorkerProcess, waitFor, type Proc, type TeamFixture } from "./fixtures";

let team: TeamFixture;
let other: TeamFixture;
let sim: SimServer;
let simc: SimProviderClient;
let worker: Proc;
let api: ApiServer;
const c: Record<string, QuiesceClient> = {};

beforeAll(async () => {
  team = await makeTeam();
  other = await makeTeam();
  sim = await startSimProvider();
  simc = new SimProviderClient(sim.url);
  await makeProvider(team.teamId, { name: "deploy-sim", url: sim.url, compensate: true });
  worker = startWorkerProcess(team.teamId, { QUIESCE_BARRIER_CLAIM_MS: "5000", QUIESCE_LOCAL_SETTLE_MS: "1500" });
  api = await startApiServer();
  const system = { type: "system" as const, name: "test" };
  const key = async (teamId: string, name: string, kind: "agent" | "operator", userId?: string) =>
    new QuiesceClient({ url: api.url, apiKey: (await createApiKey(system, { teamId, kind, name, userId })).secret, timeoutMs: 20_000 });
  c.agent = await key(team.teamId, "agent", "agent");
  c.agent2 = await key(team.teamId, "agent-2", "agent");
  c.operator = await key(team.teamId, "operator", "operator", team.users.operator.id);
  c.viewer = await key(team.teamId, "viewer", "operator", team.users.viewer.id);
  c.otherAdmin = await key(other.teamId, "admin", "operator", other.users.admin.id);
}, 120_000);

afterAll(async () => {
  await worker?.stop();
  await sim?.close();
  await api?.close();
  await prisma().$disconnect();
  await closePool();
});

const status = (p: Promise<unknown>) =>
  p.then(
    () => 200,
    (e: unknown) => (e instanceof QuiesceApiError ? e.status : -1),
  );

/** A root the agent holds: a call that commits during the kill, a queued job the kill cancels; killed, receipt issued. */
async function killedTree(taskId: string) {
  const run = await c.agent!.createRun({ taskId, title: "release" });
  const job = await simc.createJob({ mode: "commit_during_cancel", runId: run.runId });
  const body = { runId: run.runId, leaseId: run.leaseId, epoch: run.epoch };
  await c.agent!.registerOperation({ ...body, operationId: `${taskId}-deploy`, kind: "queued", tool: "deployment.reserve_preview" });
  await prisma().operation.updateMany({
    where: { teamId: team.teamId, operationId: `${taskId}-deploy` },
    data: { providerName: "deploy-sim", providerJobId: job.jobId },
  });
  expect((await c.agent!.admit(`${taskId}-deploy`)).decision).toBe("allow");
  await c.agent!.registerOperation({ ...body, operationId: `${taskId}-notify`, kind: "queued", tool: "slack.post" });
  const { barrierId } = await c.operator!.kill(run.runId, "wrong commit");
  await waitFor(`receipt of ${barrierId}`, async () => (await receiptsOf(barrierId)).length > 0, 90_000, 200);
  return { run, barrierId };
}

describe("restart on settled ground", () => {
  test("refused while a recovery is owed (409 naming it), then a new root that inherits the ledger", async () => {
    const { run, barrierId } = await killedTree("rel-1");
    const blocked = await c.operator!.restartRun(run.runId, "retry on the right commit").catch((e: QuiesceApiError) => e);
    expect(blocked).toBeInstanceOf(QuiesceApiError);
    expect((blocked as QuiesceApiError).status).toBe(409);
    expect((blocked as QuiesceApiError).message).toContain("recovery of rel-1-deploy is open");
    expect(await prisma().run.count({ where: { restartedFromRunId: run.runId } })).toBe(0);

    const [item] = await prisma().recoveryItem.findMany({ where: { barrierId } });
    await recordRecovery(team.users.operator.principal, item!.id, { state: "accepted", note: "the preview is wanted", evidence: "REL-9" });
    // Same team, not allowed to restart: machine keys and viewers; another team: not found.
    expect(await status(c.agent2!.restartRun(run.runId, "x"))).toBe(403);
    expect(await status(c.agent!.restartRun(run.runId, "x"))).toBe(403);
    expect(await status(c.viewer!.restartRun(run.runId, "x"))).toBe(403);
    expect(await status(c.otherAdmin!.restartRun(run.runId, "x"))).toBe(404);
    expect(await prisma().run.count({ where: { restartedFromRunId: run.runId } })).toBe(0);

    const latest = (await receiptsOf(barrierId)).at(-1)!;
    const r = await c.operator!.restartRun(run.runId, "retry on the right commit");
    expect(r).toMatchObject({ restartedFrom: run.runId, restartedFromDigest: latest.digest, rootRunId: r.runId });
    expect(Object.fromEntries(r.ledger.map((e) => [e.operationId, e.outcome]))).toEqual({
      "rel-1-deploy": "already_applied",
      "rel-1-notify": "free_to_run",
    });
    expect(await status(c.operator!.restartRun(run.runId, "again"))).toBe(409);
    const fresh = await prisma().run.findUniqueOrThrow({ where: { id: r.runId } });
    expect(fresh).toMatchObject({ taskId: "rel-1", lifecycle: "normal", restartedFromDigest: latest.digest });
    expect(await prisma().auditEvent.count({ where: { action: "run.restart", target: run.runId } })).toBe(1);

    // The old holder continues the new run: its lease, and the ledger through its own client.
    const view = await c.agent!.getRun(r.runId);
    const leaseId = view.leases[0]!.leaseId!;
    const ledger = await c.agent!.loadLedger(r.runId);
    expect(ledger.restartedFrom).toBe(run.runId);
    const ask = (operationId: string) => c.agent!.gate({ runId: r.runId, leaseId, epoch: r.epoch, operationId, tool: "t" });
    const applied = await ask("rel-1-deploy");
    expect(applied).toMatchObject({ decision: "deny", reason: "already_applied", operation: { operationId: "rel-1-deploy" } });
    expect(applied.operation?.effectReceipt).toBeTruthy();
    expect(await ask("rel-1-notify")).toMatchObject({ decision: "allow" });
    const again = await prisma().operation.findFirstOrThrow({
      where: { teamId: team.teamId, operationId: replayedOperationId("rel-1-notify", r.runId) },
    });
    expect(again).toMatchObject({ runId: r.runId, state: "running" });
    // The old rows stay the old receipt's evidence.
    expect((await prisma().operation.findFirstOrThrow({ where: { teamId: team.teamId, operationId: "rel-1-notify" } })).runId).toBe(
      run.runId,
    );
  }, 180_000);

  test("refused for a run that is not a killed root, or whose receipt is not quiet", async () => {
    const live = await c.agent!.createRun({ taskId: "rel-2" });
    expect(await status(c.operator!.restartRun(live.runId, "x"))).toBe(409);
    const child = await c.agent!.createRun({ taskId: "rel-2", parentRunId: live.runId });
    await c.operator!.kill(live.runId, "stop");
    expect(await status(c.operator!.restartRun(child.runId, "x"))).toBe(409);
    // A call nobody can settle (no provider): the receipt stays stop_incomplete with an unknown outcome.
    const stuck = await c.agent!.createRun({ taskId: "rel-3" });
    await c.agent!.gate({ runId: stuck.runId, leaseId: stuck.leaseId, epoch: stuck.epoch, operationId: "rel-3-call", tool: "t" });
    const { barrierId } = await c.operator!.kill(stuck.runId, "stop");
    await waitFor(`receipt of ${barrierId}`, async () => (await receiptsOf(barrierId)).length > 0, 90_000, 200);
    const e = await c.operator!.restartRun(stuck.runId, "x").catch((x: QuiesceApiError) => x);
    expect((e as QuiesceApiError).status).toBe(409);
    expect((e as QuiesceApiError).message).toMatch(/stop receipt says stop_incomplete|no stop receipt yet/);
    expect(await prisma().run.count({ where: { restartedFromRunId: { in: [live.runId, child.runId, stuck.runId] } } })).toBe(0);
  }, 180_000);
});
