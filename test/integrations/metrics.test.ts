// /metrics scraped over HTTP (the real route module, served like every other route by the test
// server): the token is required, gate decisions are counted by decision and reason with a latency
// histogram, and barriers, kill timings, open reconciliations and the webhook outbox come from
// PostgreSQL. Other test files share the database, so database-wide numbers are checked as deltas.
import { afterAll, beforeAll, expect, test } from "vitest";
import { prisma } from "../../lib/platform/db/prisma";
import { QuiesceClient } from "../../lib/agent/sdk/client";
import { pauseRun } from "../../lib/modules/runs/lifecycle";
import { createWebhookEndpoint } from "../../lib/modules/webhooks/webhooks";
import { deliverDueOnce } from "../../lib/modules/webhooks/worker";
import { makeTeam, type TestTeam } from "../api/fixtures";
import { startApiServer, type ApiServer } from "../support/api-server";
import { closePool } from "../../lib/platform/db/pool";
import { addOp } from "../barrier/fixtures";

const TOKEN = "metrics-token-for-the-test-0123456789";
let world: { server: ApiServer; a: TestTeam };
beforeAll(async () => {
  process.env.QUIESCE_METRICS_TOKEN = TOKEN;
  world = { server: await startApiServer({ also: ["metrics", ".well-known"] }), a: await makeTeam("metrics") };
}, 60_000);
afterAll(async () => {
  await world?.server.close();
  await prisma().$disconnect();
  await closePool();
});

async function scrape(): Promise<Map<string, number>> {
  const res = await fetch(`${world.server.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
  const out = new Map<string, number>();
  for (const line of (await res.text()).split("\n")) {
    if (!line || line.startsWith("#")) continue;
    const m = /^(\S+) (\S+)$/.exec(line);
    if (!m) throw new Error(`not exposition format: ${line}`);
    out.set(m[1]!, Number(m[2]));
  }
  return out;
}
const v = (m: Map<string, number>, k: string) => m.get(k) ?? 0;

test("the metrics token is required; without one configured the endpoint is off", async () => {
  expect((await fetch(`${world.server.url}/metrics`)).status).toBe(401);
  expect((await fetch(`${world.server.url}/metrics`, { headers: { authorization: "Bearer wrong-token-wrong-token" } })).status).toBe(401);
  delete process.env.QUIESCE_METRICS_TOKEN;
  try {
    expect((await fetch(`${world.server.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } })).status).toBe(404);
  } finally {
    process.env.QUIESCE_METRICS_TOKEN = TOKEN;
  }
});

test("a scrape reports gate decisions, latency, barriers, kill timings, reconciliations and the webhook outbox", async () => {
  const before = await scrape();
  const agent = new QuiesceClient({ url: world.server.url, apiKey: world.a.keys.agent, timeoutMs: 20_000 });
  const operator = new QuiesceClient({ url: world.server.url, apiKey: world.a.keys.operator, timeoutMs: 20_000 });
  const run = await agent.createRun({ taskId: "metrics" });
  for (let i = 0; i < 3; i++)
    await agent.gate({ runId: run.runId, leaseId: run.leaseId, epoch: run.epoch, operationId: `op-m-${i}`, tool: "t" });
  // An unknown outcome opens a reconciliation (a database trigger).
  const op = await addOp(
    world.a.teamId,
    { runId: run.runId, leaseId: run.leaseId, epoch: run.epoch },
    { state: "running", operationId: "op-m-unknown" },
  );
  await prisma().operation.update({ where: { id: op.rowId }, data: { state: "aborted_unknown" } });
  // A webhook endpoint that is down: one pending event, and (another endpoint, max 1 attempt) a dead letter.
  await createWebhookEndpoint(
    { type: "system", name: "test" },
    { url: "http://127.0.0.1:9/down", eventTypes: ["run.paused", "run.killed"] },
    world.a.teamId,
  );
  await pauseRun({ type: "system", name: "test" }, run.runId, "metrics");
  await deliverDueOnce({ teamId: world.a.teamId, maxAttempts: 1, timeoutMs: 1000 });
  await operator.kill(run.runId, "metrics");
  await agent.gate({ runId: run.runId, leaseId: run.leaseId, epoch: run.epoch, operationId: "op-m-late", tool: "t" });
  const after = await scrape();

  expect(
    v(after, 'quiesce_gate_decisions_total{decision="allow",reason="allowed",check="gate"}') -
      v(before, 'quiesce_gate_decisions_total{decision="allow",reason="allowed",check="gate"}'),
  ).toBe(3);
  const killed = 'quiesce_gate_decisions_total{decision="deny",reason="killed",check="gate"}';
  expect(v(after, killed) - v(before, killed)).toBe(1);
  expect(
    v(after, 'quiesce_gate_decision_seconds_count{check="gate"}') - v(before, 'quiesce_gate_decision_seconds_count{check="gate"}'),
  ).toBe(4);
  expect(v(after, 'quiesce_gate_decision_seconds_bucket{le="+Inf",check="gate"}')).toBe(
    v(after, 'quiesce_gate_decision_seconds_count{check="gate"}'),
  );

  expect(v(after, 'quiesce_barriers{phase="revoking"}') + v(after, 'quiesce_barriers{phase="settling"}')).toBeGreaterThanOrEqual(1);
  expect(
    v(after, "quiesce_kill_to_dispatch_stopped_seconds_count") - v(before, "quiesce_kill_to_dispatch_stopped_seconds_count"),
  ).toBeGreaterThanOrEqual(1);
  expect(v(after, 'quiesce_kill_to_dispatch_stopped_seconds_bucket{le="+Inf"}')).toBe(
    v(after, "quiesce_kill_to_dispatch_stopped_seconds_count"),
  );
  expect(after.has("quiesce_kill_to_receipt_seconds_count")).toBe(true);
  expect(
    v(after, 'quiesce_open_reconciliations{age="lt_1h"}') - v(before, 'quiesce_open_reconciliations{age="lt_1h"}'),
  ).toBeGreaterThanOrEqual(1);
  expect(v(after, "quiesce_webhook_dead_letters") - v(before, "quiesce_webhook_dead_letters")).toBeGreaterThanOrEqual(1);
  expect(v(after, "quiesce_webhook_backlog") - v(before, "quiesce_webhook_backlog")).toBeGreaterThanOrEqual(1); // run.killed, not yet attempted
});

test("the signing public keys are published at /.well-known/quiesce/keys.json", async () => {
  const res = await fetch(`${world.server.url}/.well-known/quiesce/keys.json`);
  expect(res.status).toBe(200);
  const doc = (await res.json()) as { predicate_types: string[]; keys: { keyid: string; public_key_pem: string; current: boolean }[] };
  expect(doc.predicate_types).toEqual(["https://quiesce.dev/stop-receipt/v1"]);
  expect(doc.keys.filter((k) => k.current)).toHaveLength(1);
  expect(doc.keys[0]!.public_key_pem).toMatch(/^-----BEGIN PUBLIC KEY-----/);
  expect(doc.keys[0]!.keyid).toMatch(/^ed25519:[0-9a-f]{32}$/);
});
