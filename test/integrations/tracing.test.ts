// OpenTelemetry against a local OTLP/HTTP receiver: with OTEL_EXPORTER_OTLP_ENDPOINT set, gate
// decisions, a kill, the barrier engine's steps and a settlement are exported as spans; an agent's W3C
// traceparent (sent by the SDK) makes the gate and kill spans children of the agent's span.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, expect, test } from "vitest";
import { prisma } from "../../lib/platform/db/prisma";
import { QuiesceClient } from "../../lib/agent/sdk/client";
import { runBarrierWorker } from "../../lib/modules/stop/engine/worker";
import { flushTracing } from "../../lib/platform/telemetry/tracing";
import { makeTeam, makeWorld, type World } from "../api/fixtures";
import { addOp, waitFor } from "../barrier/fixtures";

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  attributes: { key: string; value: { stringValue?: string } }[];
}
const spans: OtlpSpan[] = [];
const requests: { path: string; contentType: string | undefined }[] = [];
const receiver = http.createServer((req, res) => {
  let body = "";
  req.on("data", (d) => {
    body += d;
  });
  req.on("end", () => {
    requests.push({ path: req.url ?? "", contentType: req.headers["content-type"] });
    const doc = JSON.parse(body) as { resourceSpans: { scopeSpans: { spans: OtlpSpan[] }[] }[] };
    for (const rs of doc.resourceSpans) for (const ss of rs.scopeSpans) spans.push(...ss.spans);
    res.writeHead(200, { "content-type": "application/json" }).end("{}");
  });
});

let world: World;
beforeAll(async () => {
  await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", r));
  // The standard variables, set before anything traces (the SDK starts on first use).
  process.env.OTEL_EXPORTER_OTLP_ENDPOINT = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  process.env.OTEL_SERVICE_NAME = "quiesce-test";
  world = await makeWorld();
}, 60_000);
afterAll(async () => {
  await world?.close();
  await new Promise((r) => receiver.close(r));
});

const hex = (n: number) => Array.from({ length: n }, () => Math.floor(Math.random() * 16).toString(16)).join("");
const attr = (s: OtlpSpan, k: string) => s.attributes.find((a) => a.key === k)?.value.stringValue;

test("gate, kill, barrier steps and settlements are traced; the agent's traceparent links them", async () => {
  const traceId = hex(32),
    agentSpan = hex(16),
    operatorSpan = hex(16);
  const agent = new QuiesceClient({
    url: world.server.url,
    apiKey: world.a.keys.agent,
    timeoutMs: 20_000,
    traceparent: `00-${traceId}-${agentSpan}-01`,
  });
  const run = await agent.createRun({ taskId: "traced" });
  await prisma().team.update({ where: { id: world.a.teamId }, data: { quietPeriodMs: 0 } });
  const allowed = await agent.gate({
    runId: run.runId,
    leaseId: run.leaseId,
    epoch: run.epoch,
    operationId: "op-traced-1",
    tool: "deploy",
  });
  expect(allowed.decision).toBe("allow");
  await addOp(
    world.a.teamId,
    { runId: run.runId, leaseId: run.leaseId, epoch: run.epoch },
    { state: "running", operationId: "op-traced-running" },
  );

  const operator = new QuiesceClient({
    url: world.server.url,
    apiKey: world.a.keys.operator,
    timeoutMs: 20_000,
    traceparent: () => `00-${traceId}-${operatorSpan}-01`,
  });
  const { barrierId } = await operator.kill(run.runId, "traced stop");
  const denied = await agent.gate({ runId: run.runId, leaseId: run.leaseId, epoch: run.epoch, operationId: "op-traced-2", tool: "deploy" });
  expect(denied.decision).toBe("deny");

  // The engine, in this process, settles the running operation (no provider: unknown after 300 ms) and issues the receipt.
  const ac = new AbortController();
  const engine = runBarrierWorker({
    teamId: world.a.teamId,
    claimMs: 5000,
    pollMs: 200,
    localSettleMs: 300,
    signal: ac.signal,
    listen: true,
  });
  await waitFor("receipt", () => prisma().stopReceipt.findFirst({ where: { barrierId } }), 60_000, 100);
  ac.abort();
  await engine;
  await flushTracing();

  await waitFor("spans", async () => spans.some((s) => s.name === "quiesce.barrier.complete"), 20_000, 100);
  expect(requests.every((r) => r.path === "/v1/traces" && /application\/json/.test(r.contentType ?? ""))).toBe(true);
  const gates = spans.filter((s) => s.name === "quiesce.gate");
  expect(gates).toHaveLength(2);
  for (const g of gates) {
    expect(g.traceId).toBe(traceId);
    expect(g.parentSpanId).toBe(agentSpan);
    expect(attr(g, "quiesce.run_id")).toBe(run.runId);
  }
  expect(gates.map((g) => attr(g, "quiesce.decision")).sort()).toEqual(["allow", "deny"]);
  const kill = spans.find((s) => s.name === "quiesce.kill")!;
  expect(kill).toMatchObject({ traceId, parentSpanId: operatorSpan });
  expect(attr(kill, "quiesce.barrier_id")).toBe(barrierId);
  for (const step of ["dispatch_stopped", "settling", "quiet", "complete"]) {
    const s = spans.filter((x) => x.name === `quiesce.barrier.${step}` && attr(x, "quiesce.barrier_id") === barrierId);
    expect(s.length, step).toBeGreaterThan(0);
  }
  const settling = spans.find((x) => x.name === "quiesce.barrier.settling" && attr(x, "quiesce.barrier_id") === barrierId)!;
  const settlement = spans.find((x) => x.name === "quiesce.settlement" && attr(x, "quiesce.operation_id") === "op-traced-running")!;
  expect(settlement).toMatchObject({ traceId: settling.traceId, parentSpanId: settling.spanId });
}, 120_000);

test("a malformed traceparent is ignored, not an error", async () => {
  const other = await makeTeam("tp");
  const c = new QuiesceClient({ url: world.server.url, apiKey: other.keys.agent, timeoutMs: 20_000, traceparent: "00-zz-not-a-trace" });
  const run = await c.createRun({ taskId: "bad-tp" });
  const r = await c.gate({ runId: run.runId, leaseId: run.leaseId, epoch: run.epoch, operationId: "op-bad-tp", tool: "t" });
  expect(r.decision).toBe("allow");
  await flushTracing();
  await waitFor("span", async () => spans.some((s) => s.name === "quiesce.gate" && attr(s, "quiesce.run_id") === run.runId), 20_000, 100);
  const s = spans.find((x) => x.name === "quiesce.gate" && attr(x, "quiesce.run_id") === run.runId)!;
  expect(s.parentSpanId ?? "").toBe("");
});
