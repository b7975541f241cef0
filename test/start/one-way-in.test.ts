// One way in for agents (lib/start/api-forward.ts): the console's front forwards /api/v1 to the API
// process over real sockets, and a caller cannot tell the two ports apart by their answers — reads,
// the gate, refusals of another team and of a same-team key that is not the holder, bad input, event
// streams. The address the API process acts on is the one the front decided, and the front's secret
// header sent by a client straight to the API port is not believed.
import http from "node:http";
import { afterAll, beforeAll, expect, test } from "vitest";
import { firstEventChunk, makeWorld, raw, type World } from "../api/fixtures";
import { startWebFront, type WebFront } from "../../lib/start/web-front";
import { prisma } from "../../lib/platform/db/prisma";

const SECRET = "front-secret-".padEnd(43, "x");
let w: World;
let front: WebFront;
let upstreamDown: WebFront;
beforeAll(async () => {
  w = await makeWorld();
  process.env.QUIESCE_FRONT_SECRET = SECRET;
  front = await startWebFront({
    port: 0,
    host: "127.0.0.1",
    dir: ".",
    api: { upstream: w.server.url, secret: SECRET },
    handler: (_req, res) => {
      res.writeHead(200, { "content-type": "text/plain" });
      res.end("console");
    },
  });
  // Nothing listens on port 9 here: the front's answer when the API process is gone.
  upstreamDown = await startWebFront({
    port: 0,
    host: "127.0.0.1",
    dir: ".",
    api: { upstream: "http://127.0.0.1:9", secret: SECRET },
    handler: () => {},
  });
}, 60_000);
afterAll(async () => {
  delete process.env.QUIESCE_FRONT_SECRET;
  await front?.close();
  await upstreamDown?.close();
  await w?.close();
});

/** Status and body without what differs per request by design (request ids, times of the answer). */
function comparable(r: { status: number; json: unknown; text: string }) {
  return {
    status: r.status,
    body: r.json === undefined ? r.text : JSON.parse(JSON.stringify(r.json, (k, v) => (k === "requestId" ? undefined : v))),
  };
}

test("both ports give the same answers: reads, the gate, refusals, bad input", async () => {
  const agent = w.a.keys.agent;
  const run = await w.client(agent).createRun({ taskId: "one-way-in" });
  const calls: [string, string, { key?: string | null; body?: unknown; rawBody?: string }][] = [
    ["GET", "/api/v1/openapi.json", {}],
    ["GET", `/api/v1/runs/${run.runId}`, { key: agent }],
    ["POST", "/api/v1/gate", { key: agent, body: { runId: run.runId, leaseId: run.leaseId, operationId: "op-one-way", tool: "deploy" } }],
    // Another team: 404, exactly like a missing run.
    ["GET", `/api/v1/runs/${run.runId}`, { key: w.b.keys.agent }],
    // Same team, not the holder: refused, and refused the same way on both ports.
    ["POST", `/api/v1/runs/${run.runId}/finish`, { key: w.a.keys.gateway, body: {} }],
    ["POST", `/api/v1/runs/${run.runId}/observed`, { key: w.a.keys.gateway, body: { meaning: "process_terminated" } }],
    ["POST", "/api/v1/gate", { key: agent, rawBody: "{not json" }],
    ["GET", "/api/v1/runs/x", { key: null }],
    ["GET", "/api/v1/nope", { key: agent }],
  ];
  for (const [method, path, opts] of calls) {
    const direct = comparable(await raw(w.server.url, method, path, opts));
    const forwarded = comparable(await raw(front.url, method, path, opts));
    expect({ method, path, ...forwarded }).toEqual({ method, path, ...direct });
  }
  // The non-holder's refusals were refusals, not no-ops that happen to look alike.
  const refused = await raw(front.url, "POST", `/api/v1/runs/${run.runId}/finish`, { key: w.a.keys.gateway, body: {} });
  expect(refused.status).toBe(403);
  expect((await raw(front.url, "GET", `/api/v1/runs/${run.runId}`, { key: agent })).json.status).not.toBe("finished");
  // Everything else is the console's.
  expect((await raw(front.url, "GET", "/runs", {})).text).toBe("console");
  expect((await raw(front.url, "GET", "/api/v1x", {})).text).toBe("console");
});

test("event streams pass through the front chunk by chunk", async () => {
  const run = await w.client(w.a.keys.agent).createRun({ taskId: "one-way-in-stream" });
  const first = await firstEventChunk(front.url, run.runId, w.a.keys.agent);
  expect(first.status).toBe(200);
  expect(first.contentType).toContain("text/event-stream");
  expect(first.done).toBe(false);
  expect(first.text).toContain("event: ready");
});

function badKeyFrom(url: string, from: string, headers: Record<string, string> = {}): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      `${url}/api/v1/runs/x`,
      { localAddress: from, agent: false, headers: { authorization: "Bearer qk_agent_not-a-key", ...headers } },
      (res) => {
        res.resume();
        res.on("end", () => resolve(res.statusCode ?? 0));
      },
    );
    req.on("error", reject);
    req.end();
  });
}

const counted = async (address: string) =>
  (
    await prisma().$queryRawUnsafe<{ n: number }[]>(
      `SELECT count(*)::int AS n FROM auth_throttles WHERE key = $1`,
      `key-address:${address}`,
    )
  )[0]!.n;

test("the API process acts on the address the front decided; a client's own copy of the front's header is not believed", async () => {
  process.env.QUIESCE_TRUSTED_PROXIES = "";
  try {
    // Through the front: the client's socket address, whatever forwarding header it sends.
    expect(await badKeyFrom(front.url, "127.0.0.21", { "x-forwarded-for": "203.0.113.21", "x-quiesce-front": "guess" })).toBe(401);
    expect(await counted("127.0.0.21")).toBe(1);
    expect(await counted("203.0.113.21")).toBe(0);
    // Straight to the API port with a wrong secret: its own socket address again.
    expect(await badKeyFrom(w.server.url, "127.0.0.22", { "x-forwarded-for": "203.0.113.22", "x-quiesce-front": "guess" })).toBe(401);
    expect(await counted("127.0.0.22")).toBe(1);
    expect(await counted("203.0.113.22")).toBe(0);
  } finally {
    delete process.env.QUIESCE_TRUSTED_PROXIES;
  }
});

test("the API process gone: 502 in the API's error shape, and the console still answers", async () => {
  const r = await raw(upstreamDown.url, "GET", "/api/v1/openapi.json", {});
  expect(r.status).toBe(502);
  expect(r.json.error.code).toBe("api_unavailable");
});
