// The typed SDK client: configuration from the environment, typed errors for every failure, its own
// timeout — so adapters can turn any failure into a deny (fail closed).
import { afterAll, beforeAll, expect, test } from "vitest";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { QuiesceClient } from "../../lib/agent/sdk/client";
import { QuiesceApiError, QuiesceConfigError, QuiesceUnreachableError } from "../../lib/agent/sdk/errors";
import { makeWorld, type World } from "./fixtures";

let w: World;
beforeAll(async () => {
  w = await makeWorld();
});
afterAll(async () => {
  await w?.close();
});

async function listen(handler: http.RequestListener): Promise<{ url: string; close(): Promise<void> }> {
  const s = http.createServer(handler);
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
  const url = `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
  return {
    url,
    close: () =>
      new Promise((r) => {
        s.closeAllConnections();
        s.close(() => r());
      }),
  };
}

test("reads QUIESCE_URL and QUIESCE_API_KEY from the environment; options override", async () => {
  const saved = { url: process.env.QUIESCE_URL, key: process.env.QUIESCE_API_KEY };
  try {
    process.env.QUIESCE_URL = `${w.server.url}/`;
    process.env.QUIESCE_API_KEY = w.a.keys.agent;
    const fromEnv = new QuiesceClient();
    expect(fromEnv.url).toBe(w.server.url);
    const r = await fromEnv.createRun({ taskId: "sdk-env" });
    expect(r.status).toBe(201);
    const overridden = new QuiesceClient({ apiKey: w.b.keys.agent });
    await expect(overridden.getRun(r.runId)).rejects.toMatchObject({ status: 404 });
    delete process.env.QUIESCE_URL;
    expect(() => new QuiesceClient()).toThrow(QuiesceConfigError);
    delete process.env.QUIESCE_API_KEY;
    await expect(new QuiesceClient({ url: w.server.url }).getRun(r.runId)).rejects.toBeInstanceOf(QuiesceConfigError);
  } finally {
    if (saved.url === undefined) delete process.env.QUIESCE_URL;
    else process.env.QUIESCE_URL = saved.url;
    if (saved.key === undefined) delete process.env.QUIESCE_API_KEY;
    else process.env.QUIESCE_API_KEY = saved.key;
  }
});

test("an HTTP error becomes QuiesceApiError with status, code, message and details", async () => {
  const c = w.client(w.a.keys.agent);
  const err = await c.gate({ runId: "r", leaseId: "l", epoch: -1, operationId: "o", tool: "t" }).catch((e) => e);
  expect(err).toBeInstanceOf(QuiesceApiError);
  expect(err).toMatchObject({ status: 400, code: "bad_request" });
  expect(err.message).toContain("body.epoch");
  expect(err.details).toMatchObject({ issues: [expect.objectContaining({ field: "body.epoch" })] });
  const unauth = await w
    .client("qk_agent_wrong")
    .listRuns()
    .catch((e) => e);
  expect(unauth).toMatchObject({ status: 401, code: "unauthenticated" });
});

test("a refused connection is QuiesceUnreachableError (not timed out)", async () => {
  const s = await listen((_q, r) => r.end());
  await s.close();
  const err = await new QuiesceClient({ url: s.url, apiKey: "k" }).heartbeat("op").catch((e) => e);
  expect(err).toBeInstanceOf(QuiesceUnreachableError);
  expect(err.timedOut).toBe(false);
});

test("a control plane that never answers is QuiesceUnreachableError after the client's own timeout", async () => {
  const s = await listen(() => {
    /* never answers */
  });
  try {
    const err = await new QuiesceClient({ url: s.url, apiKey: "k", timeoutMs: 200 })
      .gate({ runId: "r", leaseId: "l", epoch: 1, operationId: "o", tool: "t" })
      .catch((e) => e);
    expect(err).toBeInstanceOf(QuiesceUnreachableError);
    expect(err.timedOut).toBe(true);
    expect(err.message).toContain("200 ms");
  } finally {
    await s.close();
  }
});

test("a non-JSON success or an error without the error shape is still a typed error", async () => {
  const s = await listen((q, r) => {
    if (q.url?.includes("html")) {
      r.writeHead(200, { "content-type": "text/html" });
      r.end("<html>proxy login</html>");
      return;
    }
    r.writeHead(502);
    r.end("bad gateway");
  });
  try {
    const c = new QuiesceClient({ url: s.url, apiKey: "k" });
    await expect(c.getRun("html")).rejects.toMatchObject({ name: "QuiesceApiError", status: 200, code: "bad_response" });
    await expect(c.getRun("x")).rejects.toMatchObject({ name: "QuiesceApiError", status: 502, code: "http_502" });
  } finally {
    await s.close();
  }
});

test("openapi() needs no key", async () => {
  const doc = await new QuiesceClient({ url: w.server.url, apiKey: "" }).openapi();
  expect(doc.openapi).toBe("3.1.0");
});

test("every call sends its own x-request-id; the server echoes it, and typed errors carry it", async () => {
  const seen: { url: string; id: string | undefined }[] = [];
  const s = await listen((q, r) => {
    seen.push({ url: q.url ?? "", id: q.headers["x-request-id"] as string | undefined });
    if (q.url?.endsWith("/events")) {
      r.writeHead(503, { "content-type": "application/json" });
      r.end(JSON.stringify({ error: { code: "unavailable", message: "down" } }));
      return;
    }
    r.writeHead(404, { "content-type": "application/json" });
    r.end(JSON.stringify({ error: { code: "not_found", message: "run not found" } }));
  });
  try {
    const c = new QuiesceClient({ url: s.url, apiKey: "k" });
    const e1 = await c.getRun("a").catch((e) => e);
    const e2 = await c.heartbeat("op").catch((e) => e);
    const e3 = await c.subscribe("a", () => {}, new AbortController().signal).catch((e) => e);
    expect(seen).toHaveLength(3);
    for (const x of seen) expect(x.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(new Set(seen.map((x) => x.id)).size).toBe(3); // one per call
    expect(e1).toMatchObject({ name: "QuiesceApiError", status: 404, requestId: seen[0]!.id });
    expect(e2).toMatchObject({ name: "QuiesceApiError", requestId: seen[1]!.id });
    expect(e3).toMatchObject({ name: "QuiesceApiError", status: 503, requestId: seen[2]!.id });
  } finally {
    await s.close();
  }
  // Unreachable: the id is on the error too.
  const gone = await new QuiesceClient({ url: s.url, apiKey: "k" }).heartbeat("op").catch((e) => e);
  expect(gone).toBeInstanceOf(QuiesceUnreachableError);
  expect(gone.requestId).toMatch(/^[0-9a-f-]{36}$/);

  // The real server takes the SDK's id as the request's id and echoes it on the response.
  const echoed: (string | null)[] = [];
  const sent: string[] = [];
  const spy = new QuiesceClient({
    url: w.server.url,
    apiKey: w.a.keys.agent,
    fetch: async (input, init) => {
      sent.push(new Headers(init?.headers).get("x-request-id") ?? "");
      const res = await fetch(input, init);
      echoed.push(res.headers.get("x-request-id"));
      return res;
    },
  });
  const run = await spy.createRun({ taskId: "sdk-request-id" });
  await spy.getRun(run.runId);
  expect(sent).toHaveLength(2);
  expect(sent[0]).not.toBe(sent[1]);
  expect(echoed).toEqual(sent);
});
