// Recovery against the real provider-sim and the real barrier engine process: a kill finds an effect
// completed, an item opens with an owner at once, and only the provider's later effect check (or a
// person's record) ends it. Machine API refusals for every other kind of caller, the same team's included.
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { prisma } from "../../lib/platform/db/prisma";
import { closePool } from "../../lib/platform/db/pool";
import { killRun } from "../../lib/modules/stop/kill";
import {
  announceOverdueRecoveries,
  assignRecovery,
  getRecovery,
  listRecoveries,
  recordRecovery,
  startRecovery,
} from "../../lib/modules/stop/recovery";
import { startSimProvider, type SimServer } from "../../lib/modules/stop/providers/sim-server";
import { SimProviderClient } from "../../lib/modules/stop/providers/sim-client";
import { createApiKey } from "../../lib/modules/keys/api-keys";
import { newId } from "../../lib/platform/ids";
import { startApiServer, type ApiServer } from "../support/api-server";
import {
  addOp,
  makeProvider,
  makeTeam,
  makeTree,
  receiptsOf,
  spawnCli,
  startWorkerProcess,
  waitFor,
  type Proc,
  type TeamFixture,
} from "./fixtures";

/** The CLI as a real process: its exit code and what it printed. */
async function cli(args: string[]): Promise<{ code: number | null; out: string }> {
  const p = spawnCli(args);
  const code = await new Promise<number | null>((resolve) => p.child.on("exit", (c) => resolve(c)));
  return { code, out: p.output() };
}

let team: TeamFixture;
let other: TeamFixture;
let sim: SimServer;
let simc: SimProviderClient;
let worker: Proc;
let api: ApiServer;
const keys: Record<string, string> = {};

beforeAll(async () => {
  team = await makeTeam();
  other = await makeTeam();
  sim = await startSimProvider();
  simc = new SimProviderClient(sim.url);
  await makeProvider(team.teamId, { name: "deploy-sim", url: sim.url, rollbackOwner: "release-oncall", compensate: true });
  await makeProvider(team.teamId, { name: "deploy-manual", url: sim.url, rollbackOwner: null });
  worker = startWorkerProcess(team.teamId, { QUIESCE_BARRIER_CLAIM_MS: "5000", QUIESCE_LOCAL_SETTLE_MS: "1500" });
  api = await startApiServer();
  const system = { type: "system" as const, name: "test" };
  keys.agent = (await createApiKey(system, { teamId: team.teamId, kind: "agent", name: "agent" })).secret;
  keys.viewer = (
    await createApiKey(system, { teamId: team.teamId, kind: "operator", name: "viewer", userId: team.users.viewer.id })
  ).secret;
  keys.manager = (
    await createApiKey(system, { teamId: team.teamId, kind: "operator", name: "manager", userId: team.users.manager.id })
  ).secret;
  keys.otherAdmin = (
    await createApiKey(system, { teamId: other.teamId, kind: "operator", name: "admin", userId: other.users.admin.id })
  ).secret;
}, 120_000);

afterAll(async () => {
  await worker?.stop();
  await sim?.close();
  await api?.close();
  await prisma().$disconnect();
  await closePool();
});

/** A root whose one in-flight call commits during the kill's cancel: its item, once the receipt is out. */
async function completedEffect(provider: string, compensation: "release" | "ignore" = "release") {
  const { root } = await makeTree(team.teamId, 0);
  const job = await simc.createJob({ mode: "commit_during_cancel", compensation, runId: root.runId });
  const op = await addOp(team.teamId, root, { state: "running", providerName: provider, providerJobId: job.jobId });
  const { barrierId } = await killRun(team.users.operator.principal, root.runId, "wrong_commit_detected");
  await waitFor(`receipt of ${barrierId}`, async () => (await receiptsOf(barrierId)).length > 0, 90_000, 200);
  const [item] = await listRecoveries(team.users.viewer.principal, { barrierId, state: "all" });
  return { root, job, op, barrierId, item: item! };
}

async function post(path: string, key: string, body: unknown = {}) {
  const res = await fetch(api.url + path, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json()) as any };
}

describe("recovery items", () => {
  test("a completed effect opens one item at once: the effect's rollback owner, a named person, a due time", async () => {
    const { op, barrierId, item } = await completedEffect("deploy-sim");
    expect(item).toMatchObject({
      barrierId,
      operationId: op.operationId,
      providerName: "deploy-sim",
      rollbackOwner: "release-oncall",
      state: "open",
      compensable: true,
      assignee: { userId: team.users.operator.id },
      overdue: false,
    });
    const due = Date.parse(item.dueAt) - Date.parse(item.createdAt);
    expect(due).toBeGreaterThan(86_000_000);
    expect(await prisma().recoveryItem.count({ where: { operation: { operationId: op.operationId } } })).toBe(1);
  }, 120_000);

  test("start: the provider undoes it and its effect check answers absent → rolled_back, settled by the provider", async () => {
    const { job, item, barrierId } = await completedEffect("deploy-sim");
    const before = (await receiptsOf(barrierId)).length;
    const done = await startRecovery(team.users.operator.principal, item.id);
    expect(done).toMatchObject({ state: "rolled_back", settledBy: "provider", verifiedEffect: "absent", compensationResponse: "accepted" });
    expect(Date.parse(done.verifiedAt!)).toBeGreaterThanOrEqual(Date.parse(done.compensationRequestedAt!));
    expect(await simc.getJob(job.jobId)).toMatchObject({ state: "compensated", compensateRequests: 1 });
    // Final: nothing moves it again, and a second start asks the provider nothing.
    await expect(startRecovery(team.users.operator.principal, item.id)).rejects.toMatchObject({ code: "conflict" });
    expect((await simc.getJob(job.jobId)).compensateRequests).toBe(1);
    const receipts = await receiptsOf(barrierId);
    expect(receipts.length).toBeGreaterThan(before);
    // The first receipt already listed the item as open; the latest says who proved the rollback, in its list and its summary alike.
    const first = receipts[0]!.body as any;
    expect(first.recovery).toMatchObject([{ state: "open", rollback_owner: "release-oncall", owner: team.users.operator.email }]);
    expect(first.summary).toContain("1 effect completed before the stop: 1 open.");
    const last = receipts.at(-1)!.body as any;
    expect(last.recovery).toMatchObject([{ state: "rolled_back", settled_by: "provider", by: "deploy-sim", verified_effect: "absent" }]);
    expect(last.summary).toContain(`1 effect completed before the stop: 1 rolled back (verified by deploy-sim at ${done.verifiedAt}).`);
    expect(last.summary.join(" ")).not.toContain("nothing to roll back");
    expect(last.previous_digest).toBe(receipts.at(-2)!.digest);
    const audit = await prisma().auditEvent.findMany({ where: { target: item.id }, orderBy: { id: "asc" } });
    expect(audit.map((a) => a.action)).toEqual(["recovery.start", "recovery.verify"]);
  }, 120_000);

  test("a compensation the provider accepts but does not do stays failed — never rolled_back; a person may then accept it", async () => {
    const { job, item } = await completedEffect("deploy-sim", "ignore");
    const r = await startRecovery(team.users.manager.principal, item.id);
    expect(r).toMatchObject({ state: "failed", verifiedEffect: "present", settledBy: null, compensationResponse: "accepted" });
    expect((await simc.getJob(job.jobId)).state).toBe("committed");
    const accepted = await recordRecovery(team.users.operator.principal, item.id, {
      state: "accepted",
      note: "the preview stays: release will reuse it",
      evidence: "https://deploy.example/previews/123",
    });
    expect(accepted).toMatchObject({ state: "accepted", settledBy: "person", changedBy: `user:${team.users.operator.id}` });
  }, 120_000);

  test("without a compensation endpoint a person records what was done; bad input changes nothing", async () => {
    const { item } = await completedEffect("deploy-manual");
    expect(item).toMatchObject({ compensable: false, rollbackOwner: null, assignee: { userId: team.users.operator.id } });
    await expect(startRecovery(team.users.operator.principal, item.id)).rejects.toMatchObject({ code: "conflict" });
    await expect(
      recordRecovery(team.users.operator.principal, item.id, { state: "rolled_back", note: "undone", evidence: "" }),
    ).rejects.toMatchObject({
      code: "bad_request",
    });
    await expect(
      recordRecovery(team.users.operator.principal, item.id, { state: "open" as never, note: "x", evidence: "y" }),
    ).rejects.toMatchObject({
      code: "bad_request",
    });
    expect((await getRecovery(team.users.viewer.principal, item.id)).state).toBe("open");
    const r = await recordRecovery(team.users.operator.principal, item.id, {
      state: "rolled_back",
      note: "released the preview by hand",
      evidence: "deployctl release preview-42: ok",
    });
    expect(r).toMatchObject({ state: "rolled_back", settledBy: "person" });
  }, 120_000);

  test("only the owner or a manager may act; a manager reassigns; other callers change nothing", async () => {
    const { item } = await completedEffect("deploy-manual");
    const base = `/api/v1/recoveries/${item.id}`;
    const body = { state: "rolled_back", note: "n", evidence: "e" };
    // Same team, not the owner: a viewer's key, and an agent key (machine keys never write this).
    expect((await post(`${base}/record`, keys.viewer!, body)).status).toBe(403);
    expect((await post(`${base}/start`, keys.viewer!)).status).toBe(403);
    expect((await post(`${base}/record`, keys.agent!, body)).status).toBe(403);
    expect((await post(`${base}/assign`, keys.viewer!, { assigneeUserId: team.users.viewer.id })).status).toBe(403);
    // Another team: not found, as if it did not exist.
    expect((await post(`${base}/record`, keys.otherAdmin!, body)).status).toBe(404);
    // Bad input: 400 naming the field.
    const bad = await post(`${base}/record`, keys.manager!, { state: "rolled_back", note: "n" });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.json)).toContain("evidence");
    expect((await getRecovery(team.users.viewer.principal, item.id)).state).toBe("open");
    // A manager hands it to the viewer, who may then record it.
    const assigned = await post(`${base}/assign`, keys.manager!, { assigneeUserId: team.users.viewer.id });
    expect(assigned.status).toBe(200);
    expect(assigned.json.assignee.userId).toBe(team.users.viewer.id);
    await expect(assignRecovery(team.users.manager.principal, item.id, other.users.admin.id)).rejects.toMatchObject({
      code: "bad_request",
    });
    const rec = await post(`${base}/record`, keys.viewer!, body);
    expect(rec.status).toBe(200);
    expect(rec.json).toMatchObject({ state: "rolled_back", settledBy: "person" });
    const list = await fetch(`${api.url}/api/v1/recoveries?state=all&barrierId=${item.barrierId}`, {
      headers: { authorization: `Bearer ${keys.agent}` },
    });
    expect(((await list.json()) as any).recoveries).toHaveLength(1);
  }, 120_000);

  test("the CLI: list, start as the owner (exit 0 only when proven), refusals exit 2 and change nothing", async () => {
    const { item, job } = await completedEffect("deploy-sim");
    const listed = await cli(["recovery", "list", "--barrier", item.barrierId, "--json"]);
    expect(listed.code).toBe(0);
    expect(JSON.parse(listed.out.slice(listed.out.indexOf("[")))).toEqual([item]);
    const stranger = await cli(["recovery", "start", item.id, "--as", team.users.viewer.email]);
    expect(stranger.code).toBe(2);
    expect(stranger.out).toContain("only the recovery's owner or a manager/admin");
    expect((await cli(["recovery", "record", item.id, "--state", "rolled_back", "--as", team.users.operator.email])).code).toBe(2);
    expect((await cli(["recovery", "frobnicate"])).code).toBe(2);
    expect((await getRecovery(team.users.viewer.principal, item.id)).state).toBe("open");
    expect((await simc.getJob(job.jobId)).compensateRequests).toBe(0);
    const started = await cli(["recovery", "start", item.id, "--as", team.users.operator.email]);
    expect(started.code, started.out).toBe(0);
    expect(started.out).toContain("rolled_back");
    expect(started.out).toContain("verified absent by deploy-sim");
  }, 120_000);

  test("an item past its due time is marked overdue and announced to webhooks once (recovery.overdue)", async () => {
    const { item } = await completedEffect("deploy-manual");
    await prisma().webhookEndpoint.create({
      data: {
        id: newId("whk"),
        teamId: team.teamId,
        url: "http://127.0.0.1:9/hook",
        secret: "s",
        eventTypes: ["recovery.overdue"],
        createdBy: "test",
      },
    });
    const system = { type: "system" as const, name: "test" };
    expect(await announceOverdueRecoveries(system, team.teamId)).toEqual([]);
    await prisma().recoveryItem.update({ where: { id: item.id }, data: { dueAt: new Date(Date.now() - 1000) } });
    expect((await getRecovery(team.users.viewer.principal, item.id)).overdue).toBe(true);
    expect(await announceOverdueRecoveries(system, team.teamId)).toEqual([{ id: item.id, teamId: team.teamId }]);
    expect(await announceOverdueRecoveries(system, team.teamId)).toEqual([]);
    const sent = await prisma().webhookDelivery.findMany({ where: { teamId: team.teamId, type: "recovery.overdue" } });
    expect(sent).toHaveLength(1);
    expect(sent[0]!.event as any).toMatchObject({
      type: "dev.quiesce.recovery.overdue",
      subject: item.id,
      data: { recovery_id: item.id, state: "open" },
    });
    // Done work is never overdue.
    await recordRecovery(team.users.operator.principal, item.id, { state: "accepted", note: "kept on purpose", evidence: "ticket REL-1" });
    expect((await getRecovery(team.users.viewer.principal, item.id)).overdue).toBe(false);
  }, 120_000);
});
