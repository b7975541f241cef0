// The test HTTP server that serves app/api/v1 route modules without Next: routing, path parameters,
// 404 / 405, and streaming (a server-sent event arrives while the response is still open).
import { afterAll, beforeAll, expect, test } from "vitest";
import { firstEventChunk, makeWorld, raw, type World } from "./fixtures";

let w: World;
beforeAll(async () => {
  w = await makeWorld();
});
afterAll(async () => {
  await w?.close();
});

test("unknown paths answer 404 and unsupported methods 405, both in the error shape", async () => {
  const nf = await raw(w.server.url, "GET", "/api/v1/nope", { key: w.a.keys.agent });
  expect(nf.status).toBe(404);
  expect(nf.json.error.code).toBe("not_found");
  const na = await raw(w.server.url, "DELETE", "/api/v1/runs", { key: w.a.keys.agent });
  expect(na.status).toBe(405);
  expect(na.json.error.message).toContain("DELETE");
});

test("static segments win over parameters and parameters are URL-decoded", async () => {
  const agent = w.client(w.a.keys.agent);
  const r = await agent.createRun({ taskId: "routing" });
  // /runs/{runId} and /runs/{runId}/pause are distinct routes; a percent-encoded id is decoded.
  const v = await raw(w.server.url, "GET", `/api/v1/runs/${encodeURIComponent(r.runId)}`, { key: w.a.keys.agent });
  expect(v.status).toBe(200);
  expect(v.json.runId).toBe(r.runId);
  const odd = await raw(w.server.url, "GET", `/api/v1/runs/${encodeURIComponent("a/b c")}`, { key: w.a.keys.agent });
  expect(odd.status).toBe(404);
  expect(odd.json.error.message).toBe("run not found");
});

test("responses stream: the first server-sent event arrives while the stream stays open", async () => {
  const r = await w.client(w.a.keys.agent).createRun({ taskId: "stream" });
  const first = await firstEventChunk(w.server.url, r.runId, w.a.keys.agent);
  expect(first.status).toBe(200);
  expect(first.contentType).toContain("text/event-stream");
  expect(first.done).toBe(false);
  expect(first.text).toContain("event: ready");
});
