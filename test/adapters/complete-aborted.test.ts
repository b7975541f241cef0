// The outcome the adapters added to POST /operations/{id}/complete: aborted_unknown — an executor
// aborted a running call and cannot know whether its effect happened.
import { afterAll, beforeAll, expect, test } from "vitest";
import { prisma } from "../../lib/platform/db/prisma";
import { closePool } from "../../lib/platform/db/pool";
import { makeWorld, opRow, type World } from "./support";

let w: World;
beforeAll(async () => {
  w = await makeWorld();
}, 60_000);
afterAll(async () => {
  await w?.api.close();
  await closePool();
  await prisma().$disconnect();
});

test("aborted_unknown: recorded on a live run, idempotent, carries no effect, and is final", async () => {
  const run = await w.agent.createRun({ taskId: "aborted-unknown" });
  const operationId = `abort-${Date.now().toString(36)}`;
  expect(await w.agent.gate({ runId: run.runId, leaseId: run.leaseId, epoch: run.epoch, operationId, tool: "mcp.slow" })).toMatchObject({
    decision: "allow",
  });
  await expect(w.agent.complete(operationId, { outcome: "aborted_unknown", effect: { providerOperationId: "x" } })).rejects.toMatchObject({
    status: 400,
    message: expect.stringContaining("effect"),
  });
  expect(await opRow(w.teamId, operationId)).toMatchObject({ state: "running" });
  expect(await w.agent.complete(operationId, { outcome: "aborted_unknown", detail: { abortedBy: "caller" } })).toMatchObject({
    state: "aborted_unknown",
  });
  expect(await w.agent.complete(operationId, { outcome: "aborted_unknown" })).toMatchObject({ state: "aborted_unknown" });
  await expect(w.agent.complete(operationId, { outcome: "succeeded" })).rejects.toMatchObject({ status: 409 });
  expect(await opRow(w.teamId, operationId)).toMatchObject({ state: "aborted_unknown", outcomeDetail: { abortedBy: "caller" } });
});
