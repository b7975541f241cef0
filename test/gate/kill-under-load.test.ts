// A kill lands while agents are deciding at a steady rate over real HTTP (the API process's server, the
// real route handlers, the real database): no gate call that began after the kill returned — and so
// after its commit — is answered allow. The bench runs the same check at ~300 decisions/s
// (docs/benchmarks.md#http); this test runs it at a lower rate. No timing is asserted: only the order
// of events the test itself observed (start of a call vs. return of the kill).
import { afterAll, beforeAll, expect, test } from "vitest";
import { performance } from "node:perf_hooks";
import { newId } from "../../lib/platform/ids";
import { sleep } from "../../lib/platform/wait";
import { makeWorld, type World } from "../api/fixtures";

let w: World;
beforeAll(async () => {
  w = await makeWorld();
});
afterAll(async () => {
  await w?.close();
});

interface Call {
  startedAt: number;
  endedAt: number;
  decision: string;
}

test("during a steady stream of gate calls on a run tree, a kill lands: every call that began after it returned is denied", async () => {
  const agent = w.client(w.a.keys.agent);
  const root = await agent.createRun({ taskId: "kill-under-load" });
  const children = [];
  for (let i = 0; i < 4; i++) children.push(await agent.createRun({ taskId: "kill-under-load", parentRunId: root.runId }));
  const leaves = [root, ...children];

  const calls: Call[] = [];
  let stop = false;
  // Five agents, each pacing itself to ~40 calls/s (≈200 decisions/s together, less on a busy machine).
  const agents = leaves.map(async (run) => {
    while (!stop) {
      const startedAt = performance.now();
      let decision: string;
      try {
        decision = (await agent.gate({ runId: run.runId, leaseId: run.leaseId, epoch: run.epoch, operationId: newId("op"), tool: "shell" }))
          .decision;
      } catch (e) {
        decision = `error:${(e as { code?: string }).code ?? e}`;
      }
      const endedAt = performance.now();
      calls.push({ startedAt, endedAt, decision });
      await sleep(Math.max(0, 25 - (endedAt - startedAt)));
    }
  });

  // Load on both sides of the kill, however slow the machine (a cold first call took 850 ms under a
  // load average of 20): at least 600 ms and 15 answered allows before it, 600 ms and 15 calls after.
  const until = async (ok: () => boolean) => {
    const end = Date.now() + 30_000;
    while (!ok() && Date.now() < end) await sleep(20);
  };
  await sleep(600);
  await until(() => calls.filter((c) => c.decision === "allow").length >= 15);
  const killStarted = performance.now();
  await w.client(w.a.keys.operator).kill(root.runId, "kill under load");
  const killReturned = performance.now();
  await sleep(600);
  await until(() => calls.filter((c) => c.startedAt > killReturned).length >= 15);
  stop = true;
  await Promise.all(agents);

  const before = calls.filter((c) => c.endedAt < killStarted);
  const after = calls.filter((c) => c.startedAt > killReturned);
  const during = calls.filter((c) => !before.includes(c) && !after.includes(c));
  // The load was real on both sides of the kill (otherwise the check below could not fail).
  expect(before.filter((c) => c.decision === "allow").length).toBeGreaterThan(10);
  expect(after.length).toBeGreaterThan(10);
  expect(
    after.filter((c) => c.decision === "allow"),
    `allowed after the kill returned: ${JSON.stringify(after.filter((c) => c.decision === "allow"))}`,
  ).toEqual([]);
  expect(after.every((c) => c.decision === "deny")).toBe(true);
  // Calls that overlapped the kill may go either way; each still got an answer.
  expect(during.every((c) => c.decision === "allow" || c.decision === "deny")).toBe(true);
});
