// The barrier's HTTP surface through the real route handlers (test/support/api-server) and the SDK:
// POST /runs/{id}/kill, POST /runs/{id}/observed, GET /barriers/{id}, GET /barriers/{id}/receipt.
import { isEnvelope, readStatement, type DsseEnvelope } from "../../lib/control/evidence/signing";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { parse } from "yaml";
import { prisma } from "../../lib/platform/db/prisma";
import { closePool } from "../../lib/platform/db/pool";
import { createApiKey } from "../../lib/modules/keys/api-keys";
import { runBarrierWorker } from "../../lib/modules/stop/engine/worker";
import { QuiesceClient } from "../../lib/agent/sdk/client";
import { verifyReceipt as verifyReceiptBody } from "../../lib/control/evidence/receipt";
import { BarrierViewSchema, StopReceiptSchema } from "../../lib/schemas/barriers";
import { startApiServer, type ApiServer } from "../support/api-server";
import { addOp, makeTeam, makeTree, waitFor, type TeamFixture } from "./fixtures";

let api: ApiServer;
let team: TeamFixture;
let other: TeamFixture;
let keys: { operator: string; agent: string; otherOperator: string; managerlessOperator: string };
const system = { type: "system", name: "test" } as const;
const ac = new AbortController();
let engine: Promise<void>;

beforeAll(async () => {
  api = await startApiServer();
  team = await makeTeam();
  other = await makeTeam();
  keys = {
    operator: (await createApiKey(system, { teamId: team.teamId, kind: "operator", name: "op", userId: team.users.operator.id })).secret,
    agent: (await createApiKey(system, { teamId: team.teamId, kind: "agent", name: "agent" })).secret,
    otherOperator: (await createApiKey(system, { teamId: other.teamId, kind: "operator", name: "op", userId: other.users.admin.id }))
      .secret,
    managerlessOperator: (
      await createApiKey(system, { teamId: team.teamId, kind: "operator", name: "viewer", userId: team.users.viewer.id })
    ).secret,
  };
  // The real engine, in this process, scoped to this test's team.
  engine = runBarrierWorker({ teamId: team.teamId, signal: ac.signal, pollMs: 300, claimMs: 3000, localSettleMs: 500, listen: true });
}, 120_000);

afterAll(async () => {
  ac.abort();
  await engine;
  await api?.close();
  await prisma().$disconnect();
  await closePool();
});

async function call(method: string, path: string, key: string, body?: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${api.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json", ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let json: any = null;
  try {
    json = JSON.parse(text);
  } catch {
    /* yaml */
  }
  return { status: res.status, json, text, headers: res.headers };
}

describe("barrier API", () => {
  test("kill: operator key 202 with the barrier id; machine key 403; other team 404; bad body 400; again returns the open barrier", async () => {
    const { root } = await makeTree(team.teamId, 1);
    await addOp(team.teamId, root, { state: "queued" });
    expect((await call("POST", `/api/v1/runs/${root.runId}/kill`, keys.agent, { reason: "x" })).status).toBe(403);
    expect((await call("POST", `/api/v1/runs/${root.runId}/kill`, keys.managerlessOperator, { reason: "x" })).status).toBe(403);
    expect((await call("POST", `/api/v1/runs/${root.runId}/kill`, keys.otherOperator, { reason: "x" })).status).toBe(404);
    const bad = await call("POST", `/api/v1/runs/${root.runId}/kill`, keys.operator, {});
    expect(bad.status).toBe(400);
    expect(bad.json.error.message).toContain("body.reason");
    expect((await prisma().run.findUniqueOrThrow({ where: { id: root.runId } })).lifecycle).toBe("normal");

    const killed = await call("POST", `/api/v1/runs/${root.runId}/kill`, keys.operator, { reason: "wrong_commit_detected" });
    expect(killed.status).toBe(202);
    expect(killed.json).toEqual({ barrierId: expect.stringMatching(/^stop_/), created: true });
    const again = await call("POST", `/api/v1/runs/${root.runId}/kill`, keys.operator, { reason: "again" });
    expect(again.status).toBe(202);
    expect(again.json).toEqual({ barrierId: killed.json.barrierId, created: false });
  });

  test("observed by target, barrier view and receipt (JSON, YAML, versions) through the SDK and raw HTTP", async () => {
    const { root, children } = await makeTree(team.teamId, 1);
    const agent = new QuiesceClient({ url: api.url, apiKey: keys.agent });
    const operator = new QuiesceClient({ url: api.url, apiKey: keys.operator });
    // Nothing to observe before a kill.
    // Same team is not the holder: without one of the run's leases the agent may not report for it.
    expect((await call("POST", `/api/v1/runs/${root.runId}/observed`, keys.agent, { meaning: "signal_accepted" })).status).toBe(403);
    expect(
      (await call("POST", `/api/v1/runs/${root.runId}/observed`, keys.agent, { meaning: "signal_accepted", leaseId: root.leaseId })).status,
    ).toBe(409);
    // Queued work for a provider with a 5 s quiet period: the barrier waits that long before its receipt.
    await prisma().provider.create({
      data: { id: `prov_${root.runId}`, teamId: team.teamId, name: `quiet-${root.runId}`, quietPeriodSeconds: 5 },
    });
    await addOp(team.teamId, children[0]!, { state: "queued", providerName: `quiet-${root.runId}` });
    const { barrierId } = await operator.kill(root.runId, "stop now");
    const early = await call("GET", `/api/v1/barriers/${barrierId}/receipt`, keys.agent);
    expect(early.status).toBe(404);
    expect(early.json.error.code).toBe("not_found");

    const bad = await call("POST", `/api/v1/runs/${root.runId}/observed`, keys.agent, { meaning: "stopped" });
    expect(bad.status).toBe(400);
    expect(bad.json.error.message).toContain("body.meaning");
    expect(
      (await call("POST", `/api/v1/runs/${root.runId}/observed`, keys.managerlessOperator, { meaning: "signal_accepted" })).status,
    ).toBe(403);
    expect((await call("POST", `/api/v1/runs/${root.runId}/observed`, keys.otherOperator, { meaning: "signal_accepted" })).status).toBe(
      404,
    );
    const ack = await agent.reportObserved(children[0]!.runId, {
      meaning: "turn_interrupted",
      evidence: { threadId: "t1", turnId: "u9" },
      leaseId: children[0]!.leaseId,
    });
    expect(ack).toMatchObject({ barrierId, meaning: "turn_interrupted" });
    // A weaker acknowledgment later never downgrades what was observed.
    expect(await agent.reportObserved(root.runId, { meaning: "signal_accepted", leaseId: root.leaseId })).toMatchObject({
      meaning: "turn_interrupted",
      observedAt: ack.observedAt,
    });

    const view = await waitFor(
      "barrier complete",
      async () => {
        const v = await agent.getBarrier(barrierId);
        return v.phase === "complete" ? v : null;
      },
      60_000,
      200,
    );
    const ladder = view.ladder as Record<string, { status: string; at: string | null; evidence: Record<string, unknown> }>;
    expect(Object.keys(ladder)).toEqual([
      "cancellation_requested",
      "observed_by_target",
      "new_work_prevented",
      "queued_work_cancelled",
      "execution_quiesced",
      "effects_settled",
      "receipt_issued",
    ]);
    // Both runs acknowledged: the child said turn_interrupted, the root signal_accepted — the rung shows per-run evidence.
    expect(ladder.observed_by_target).toMatchObject({ status: "done", evidence: { observed: 2, of: 2 } });
    expect(ladder.effects_settled!.status).toBe("done");
    expect(view.counts).toMatchObject({ runsKilled: 2, leasesRevoked: 2, queuedCancelled: 1, pending: 0, unknown: 0 });
    expect(view.quietPeriodSeconds).toBe(5);
    expect((await call("GET", `/api/v1/barriers/${barrierId}`, keys.otherOperator)).status).toBe(404);

    const receipt = await agent.getReceipt(barrierId);
    // The subtree is observed no further than its weakest acknowledgment (the root's signal_accepted).
    expect(receipt).toMatchObject({
      barrier_id: barrierId,
      run_id: root.runId,
      decision: "stopped_and_quiet",
      version: 1,
      observed_by_target: { meaning: "signal_accepted" },
    });
    expect(verifyReceiptBody({ body: receipt }).ok).toBe(true);
    // Both responses match their published (OpenAPI) schemas, strictly for the receipt.
    expect(() => StopReceiptSchema.parse(receipt)).not.toThrow();
    expect(() => BarrierViewSchema.parse(view)).not.toThrow();
    // The audit head the receipt was issued at (checked by `quiesce audit verify`).
    expect((receipt as { audit_head?: unknown }).audit_head).toMatchObject({
      event_id: expect.stringMatching(/^\d+$/),
      hash: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
    const yaml1 = await call("GET", `/api/v1/barriers/${barrierId}/receipt?format=yaml`, keys.agent);
    expect(yaml1.headers.get("content-type")).toContain("application/yaml");
    expect(parse(yaml1.text).stop_receipt).toEqual(receipt);
    const yaml2 = await call("GET", `/api/v1/barriers/${barrierId}/receipt`, keys.agent, undefined, { accept: "application/yaml" });
    expect(yaml2.text).toBe(yaml1.text);
    // The signed form over the machine API: a DSSE envelope whose statement names this receipt's digest.
    const dsse = await call("GET", `/api/v1/barriers/${barrierId}/receipt?format=dsse`, keys.agent);
    expect(dsse.status).toBe(200);
    expect(isEnvelope(dsse.json)).toBe(true);
    expect(readStatement(dsse.json as DsseEnvelope)?.subject[0]?.digest.sha256).toBe(receipt.digest);
    expect((await call("GET", `/api/v1/barriers/${barrierId}/receipt?version=1`, keys.agent)).json.digest).toBe(receipt.digest);
    expect((await call("GET", `/api/v1/barriers/${barrierId}/receipt?version=2`, keys.agent)).status).toBe(404);
    const badVersion = await call("GET", `/api/v1/barriers/${barrierId}/receipt?version=zero`, keys.agent);
    expect(badVersion.status).toBe(400);
    expect(badVersion.json.error.message).toContain("query.version");
    expect((await call("GET", `/api/v1/barriers/${barrierId}/receipt`, keys.otherOperator)).status).toBe(404);
  }, 120_000);
});
