import { afterAll, expect, test } from "vitest";
import { makeTeam } from "./fixtures";
import { createRun } from "../../lib/dal/runs";
import { registerOperation } from "../../lib/dal/operations";
import { authenticateKey } from "../../lib/dal/api-keys";
import { prisma } from "../../lib/db/prisma";
afterAll(async () => { await prisma().$disconnect(); });
test("race", async () => {
  const t = await makeTeam("race");
  const p = (await authenticateKey(t.keys.agent))!;
  for (let k = 0; k < 5; k++) {
    const r = await createRun(p, { taskId: "x" });
    const res = await Promise.all(Array.from({ length: 10 }, () => registerOperation(p, { runId: r.runId, leaseId: r.leaseId, epoch: 1, operationId: `o${k}`, kind: "queued", tool: "t" })));
    expect(res.filter((x) => x.created)).toHaveLength(1);
  }
});
