// POST /api/v1/operations/{id}/provider (docs/design/mcp-tasks.md): the holder of a running operation names
// where its work is held (a remote task id). Another key of the same team, another team, a finished
// operation and an unknown provider are refused and change nothing.
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { prisma } from "../../lib/platform/db/prisma";
import { closePool } from "../../lib/platform/db/pool";
import { newId } from "../../lib/platform/ids";
import { createApiKey } from "../../lib/modules/keys/api-keys";
import { QuiesceClient } from "../../lib/agent/sdk/client";
import { startApiServer, type ApiServer } from "../support/api-server";
import { makeTeam, type TeamFixture } from "../barrier/fixtures";

const system = { type: "system", name: "operation-provider-test" } as const;
let api: ApiServer;
let team: TeamFixture;
let other: TeamFixture;
let holder: QuiesceClient;
let stranger: QuiesceClient; // same team, did not register the run
let foreign: QuiesceClient; // another team

beforeAll(async () => {
  api = await startApiServer();
  team = await makeTeam();
  other = await makeTeam();
  const client = async (teamId: string, name: string) =>
    new QuiesceClient({ url: api.url, apiKey: (await createApiKey(system, { teamId, kind: "gateway", name })).secret, timeoutMs: 20_000 });
  holder = await client(team.teamId, "gateway A");
  stranger = await client(team.teamId, "gateway B");
  foreign = await client(other.teamId, "gateway C");
  for (const teamId of [team.teamId, other.teamId])
    await prisma().provider.create({
      data: { id: newId("prov"), teamId, name: "mcp-tasks", kind: "mcp", endpoint: "http://127.0.0.1:9/mcp" },
    });
}, 120_000);

afterAll(async () => {
  await api?.close();
  await prisma().$disconnect();
  await closePool();
});

const status = (p: Promise<unknown>) =>
  p.then(
    () => 200,
    (e: { status?: number }) => e.status ?? 0,
  );

async function running(taskId: string) {
  const run = await holder.createRun({ taskId });
  const operationId = `op-${run.runId}`;
  expect(await holder.gate({ runId: run.runId, leaseId: run.leaseId, epoch: run.epoch, operationId, tool: "long" })).toMatchObject({
    decision: "allow",
  });
  return { run, operationId };
}

const row = (operationId: string) =>
  prisma().operation.findFirstOrThrow({ where: { operationId }, select: { providerName: true, providerJobId: true, state: true } });

describe("recording where a running operation's work is held", () => {
  test("the holder records it once; the same again is recorded=false; another reference is 409", async () => {
    const { operationId } = await running("provider-holder");
    expect(await holder.recordProvider(operationId, { providerName: "mcp-tasks", providerJobId: "task-1" })).toEqual({
      operationId,
      providerName: "mcp-tasks",
      providerJobId: "task-1",
      recorded: true,
    });
    expect(await holder.recordProvider(operationId, { providerName: "mcp-tasks", providerJobId: "task-1" })).toMatchObject({
      recorded: false,
    });
    expect(await status(holder.recordProvider(operationId, { providerName: "mcp-tasks", providerJobId: "task-2" }))).toBe(409);
    expect(await row(operationId)).toEqual({ providerName: "mcp-tasks", providerJobId: "task-1", state: "running" });
  });

  test("a same-team key that does not hold the run: 403, nothing changes; with the holder's lease it may", async () => {
    const { run, operationId } = await running("provider-stranger");
    expect(await status(stranger.recordProvider(operationId, { providerName: "mcp-tasks", providerJobId: "forged" }))).toBe(403);
    expect(await row(operationId)).toEqual({ providerName: null, providerJobId: null, state: "running" });
    expect(
      await stranger.recordProvider(operationId, { providerName: "mcp-tasks", providerJobId: "passed-on", leaseId: run.leaseId }),
    ).toMatchObject({ recorded: true });
  });

  test("another team: 404; an unknown provider: 400; a finished operation: 409 — none changes anything", async () => {
    const { operationId } = await running("provider-refusals");
    expect(await status(foreign.recordProvider(operationId, { providerName: "mcp-tasks", providerJobId: "x" }))).toBe(404);
    expect(await status(holder.recordProvider(operationId, { providerName: "nope", providerJobId: "x" }))).toBe(400);
    expect(await row(operationId)).toEqual({ providerName: null, providerJobId: null, state: "running" });
    await holder.complete(operationId, { outcome: "succeeded" });
    expect(await status(holder.recordProvider(operationId, { providerName: "mcp-tasks", providerJobId: "late" }))).toBe(409);
    expect(await row(operationId)).toEqual({ providerName: null, providerJobId: null, state: "succeeded" });
  });
});
