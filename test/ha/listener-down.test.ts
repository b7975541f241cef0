// While the LISTEN connection is down (a failover, a network cut) notifications are lost, but a
// kill still reaches a running handler through the worker guard's periodic gate heartbeat: later,
// never lost. The listener's role is made unable to log in and its backend is terminated, so the
// listener really is down and keeps failing to reconnect while the run is killed; the heartbeat
// goes through the API (the real gate in PostgreSQL).
import { afterAll, beforeAll, expect, test } from "vitest";
import pg from "pg";
import { makeWorld, type World } from "../api/fixtures";
import { killRun } from "../../lib/modules/stop/kill";
import { ControlListener } from "../../lib/platform/db/listen";
import { databaseUrl } from "../../lib/platform/db/url";
import { listenFeed } from "../../lib/modules/stop/abort";
import { WorkerGuard, type JobStamp } from "../../lib/agent/sdk/worker";
import { newId } from "../../lib/platform/ids";
import type { Principal } from "../../lib/platform/auth/principal";
import { waitFor } from "../support/pg-local";

const SYSTEM: Principal = { type: "system", name: "test" };
const ROLE = `quiesce_listener_${process.pid}`;
let w: World;
let admin: pg.Client;

beforeAll(async () => {
  w = await makeWorld();
  admin = new pg.Client({ connectionString: databaseUrl() });
  await admin.connect();
  await admin.query(`CREATE ROLE ${ROLE} LOGIN`);
});
afterAll(async () => {
  await admin?.query(`DROP ROLE IF EXISTS ${ROLE}`).catch(() => {});
  await admin?.end();
  await w?.close();
});

test("a kill reaches a running handler by heartbeat while the listener cannot reconnect", async () => {
  const url = new URL(databaseUrl());
  url.username = ROLE;
  url.password = "";
  const logs: string[] = [];
  const listener = new ControlListener({ connectionString: url.toString(), pingIntervalMs: 200, log: (m) => logs.push(m) });
  const agent = w.client(w.a.keys.agent);
  const run = await agent.createRun({ taskId: "listener-down" });
  const operationId = newId("op");
  await agent.registerOperation({
    runId: run.runId,
    leaseId: run.leaseId,
    epoch: run.epoch,
    operationId,
    kind: "queued",
    tool: "db.compatibility_check",
  });
  const stamp: JobStamp = { runId: run.runId, leaseId: run.leaseId, epoch: run.epoch, operationId };

  const guard = new WorkerGuard({
    client: w.client(w.a.keys.worker),
    feed: listenFeed({ resolveRoot: async (id) => (await agent.getRun(id)).rootRunId, listener }),
    heartbeatIntervalMs: 300,
  });

  let started!: () => void;
  const running = new Promise<void>((r) => (started = r));
  const outcome = guard.run(stamp, async (ctx) => {
    started();
    await new Promise<void>((resolve, reject) => {
      const t = setTimeout(resolve, 60_000);
      ctx.signal.addEventListener("abort", () => {
        clearTimeout(t);
        reject(new Error("aborted"));
      });
    });
  });
  await running;

  // Take the listener down and keep it down.
  await admin.query(`ALTER ROLE ${ROLE} NOLOGIN`);
  await admin.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = $1", [ROLE]);
  await waitFor(async () => logs.some((l) => /reconnect failed/.test(l)), 20_000, "listener never failed to reconnect");

  const killedAt = Date.now();
  await killRun(SYSTEM, run.runId, "listener down");
  const out = await outcome;
  // "It may have run": the guard never claims an interrupted call did not execute.
  expect(out).toMatchObject({ status: "aborted_unknown", reason: "killed" });
  // Later than a notification would have been, but within a few heartbeats.
  expect(Date.now() - killedAt).toBeLessThan(10_000);
  expect(logs.some((l) => /reconnect failed/.test(l))).toBe(true);
  await listener.close();
}, 60_000);
