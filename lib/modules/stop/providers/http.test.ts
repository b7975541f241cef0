// The generic HTTP provider against the simulated deployment provider's real HTTP server.
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { HttpProvider, cancelResponseFrom, effectAnswerFrom, expandUrl } from "./http";
import { startSimProvider, type SimServer } from "./sim-server";
import { SimProviderClient } from "./sim-client";
import type { ProviderConfig, ProviderOperationRef } from "./types";

let sim: SimServer;
let client: SimProviderClient;
beforeAll(async () => {
  sim = await startSimProvider();
  client = new SimProviderClient(sim.url);
});
afterAll(async () => {
  await sim.close();
});

const cfg = (over: Partial<ProviderConfig> = {}): ProviderConfig => ({
  name: "deploy-sim",
  kind: "simulated",
  cancelUrl: `${sim.url}/jobs/{providerJobId}/cancel`,
  statusUrl: `${sim.url}/jobs/{providerJobId}/effect`,
  compensateUrl: `${sim.url}/jobs/{providerJobId}/compensate`,
  timeoutMs: 2000,
  settleDeadlineMs: 5000,
  quietPeriodSeconds: 0,
  rollbackOwner: "release-oncall",
  ...over,
});
const ref = (providerJobId: string): ProviderOperationRef => ({
  operationId: "op-1",
  providerJobId,
  runId: "run_1",
  tool: "deployment.reserve_preview",
});

describe("HttpProvider against provider-sim", () => {
  test("cancel_cleanly: accepted, then absent and final", async () => {
    const job = await client.createJob({ mode: "cancel_cleanly" });
    const p = new HttpProvider(cfg());
    expect(await p.checkEffect(ref(job.jobId))).toMatchObject({ effect: "absent", final: false });
    expect((await p.requestCancel(ref(job.jobId))).response).toBe("accepted");
    expect(await p.checkEffect(ref(job.jobId))).toMatchObject({ effect: "absent", final: true });
  });

  test("commit_during_cancel: accepted, yet the effect is present with the provider's operation id", async () => {
    const job = await client.createJob({ mode: "commit_during_cancel" });
    const p = new HttpProvider(cfg());
    expect((await p.requestCancel(ref(job.jobId))).response).toBe("accepted");
    expect(await p.checkEffect(ref(job.jobId))).toMatchObject({
      effect: "present",
      final: true,
      providerOperationId: `deploy-${job.jobId}`,
    });
  });

  test("status_down, drop, reject and timeouts map to unavailable / unreachable / rejected — never absent", async () => {
    const down = await client.createJob({ mode: "status_down" });
    const p = new HttpProvider(cfg());
    expect((await p.requestCancel(ref(down.jobId))).response).toBe("accepted");
    expect((await p.checkEffect(ref(down.jobId))).effect).toBe("unavailable");
    const drop = await client.createJob({ mode: "drop" });
    expect((await p.requestCancel(ref(drop.jobId))).response).toBe("unreachable");
    expect((await p.checkEffect(ref(drop.jobId))).effect).toBe("unavailable");
    const reject = await client.createJob({ mode: "reject" });
    expect((await p.requestCancel(ref(reject.jobId))).response).toBe("rejected");
    expect(await p.checkEffect(ref(reject.jobId))).toMatchObject({ effect: "absent", final: false });
    const slow = await client.createJob({ mode: "slow", delayMs: 1500 });
    const impatient = new HttpProvider(cfg({ timeoutMs: 200 }));
    expect(await impatient.requestCancel(ref(slow.jobId))).toMatchObject({
      response: "unreachable",
      detail: { error: "timeout after 200 ms" },
    });
    expect((await impatient.checkEffect(ref(slow.jobId))).effect).toBe("unavailable");
    expect((await new HttpProvider(cfg()).checkEffect(ref("no-such-job"))).effect).toBe("unavailable");
    const closed = new HttpProvider(cfg({ cancelUrl: "http://127.0.0.1:1/cancel", statusUrl: "http://127.0.0.1:1/status" }));
    expect((await closed.requestCancel(ref("x"))).response).toBe("unreachable");
    expect((await closed.checkEffect(ref("x"))).effect).toBe("unavailable");
    expect((await new HttpProvider(cfg({ cancelUrl: null, statusUrl: null })).requestCancel(ref("x"))).response).toBe("unsupported");
  });

  test("URLs without placeholders: the job id travels in the body and the query (the seeded deploy-sim row)", async () => {
    const job = await client.createJob({ mode: "commit_during_cancel" });
    const p = new HttpProvider(cfg({ cancelUrl: `${sim.url}/cancel`, statusUrl: `${sim.url}/status` }));
    expect((await p.requestCancel(ref(job.jobId))).response).toBe("accepted");
    expect((await p.checkEffect(ref(job.jobId))).effect).toBe("present");
    expect((await client.getJob(job.jobId)).cancelRequests).toBe(1);
  });
});

describe("compensation against provider-sim", () => {
  test("release: accepted, and only the effect check proves it (absent, final)", async () => {
    const job = await client.createJob({ mode: "commit_during_cancel" });
    await client.commit(job.jobId);
    const p = new HttpProvider(cfg());
    expect((await p.checkEffect(ref(job.jobId))).effect).toBe("present");
    expect((await p.requestCompensation(ref(job.jobId), "rcv-1")).response).toBe("accepted");
    expect(await p.checkEffect(ref(job.jobId))).toMatchObject({ effect: "absent", final: true });
  });
  test("ignore: the provider accepts, the effect stays present", async () => {
    const job = await client.createJob({ mode: "commit_during_cancel", compensation: "ignore" });
    await client.commit(job.jobId);
    const p = new HttpProvider(cfg());
    expect((await p.requestCompensation(ref(job.jobId), "rcv-2")).response).toBe("accepted");
    expect((await p.checkEffect(ref(job.jobId))).effect).toBe("present");
  });
  test("nothing committed: rejected; no compensate_url: unsupported", async () => {
    const job = await client.createJob({ mode: "cancel_cleanly" });
    expect((await new HttpProvider(cfg()).requestCompensation(ref(job.jobId), "rcv-3")).response).toBe("rejected");
    expect((await new HttpProvider(cfg({ compensateUrl: null })).requestCompensation(ref(job.jobId), "rcv-4")).response).toBe(
      "unsupported",
    );
  });
});

describe("mapping rules", () => {
  test("templates are filled and encoded; plain status URLs get the ids as query", () => {
    expect(expandUrl("http://x/jobs/{providerJobId}/c?op={operationId}", { ...ref("a b/c"), operationId: "o&1" }, true)).toBe(
      "http://x/jobs/a%20b%2Fc/c?op=o%261",
    );
    expect(expandUrl("http://x/status", ref("j1"), true)).toBe("http://x/status?providerJobId=j1&operationId=op-1");
    expect(expandUrl("http://x/cancel", ref("j1"), false)).toBe("http://x/cancel");
  });
  test("cancel answers: body status wins, else HTTP status", () => {
    expect(cancelResponseFrom(200, { status: "rejected" })).toBe("rejected");
    expect(cancelResponseFrom(202, null)).toBe("accepted");
    expect(cancelResponseFrom(404, null)).toBe("unsupported");
    expect(cancelResponseFrom(409, null)).toBe("rejected");
    expect(cancelResponseFrom(503, null)).toBe("unreachable");
  });
  test("effect answers without a valid effect field are unavailable", () => {
    expect(effectAnswerFrom(200, { effect: "maybe" }).effect).toBe("unavailable");
    expect(effectAnswerFrom(200, null).effect).toBe("unavailable");
    expect(effectAnswerFrom(500, { effect: "absent" }).effect).toBe("unavailable");
    expect(effectAnswerFrom(200, { effect: "absent" })).toMatchObject({ effect: "absent", final: false });
  });
});
