// Hostile input against the real route handlers over real HTTP (findings 5, 11 and 12 of the
// hardening review): NUL bytes and lone surrogates in any text field or path id, integers past their
// column, oversized and never-ending bodies, and LIKE wildcards in run search. Every refusal is a 400
// (or 401 / 413) naming the field, with nothing written.
import http from "node:http";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { makeWorld, raw, snapshot, type World } from "../api/fixtures";

let w: World;
beforeAll(async () => {
  w = await makeWorld();
});
afterAll(async () => {
  await w?.close();
});

/** A request whose JSON text is written by hand, so lone surrogates survive (JSON.stringify escapes them). */
async function rawText(method: string, path: string, key: string, text: string) {
  return raw(w.server.url, method, path, { key, rawBody: text });
}

describe("NUL and lone surrogates", () => {
  test("in a body field: 400 naming it, nothing written", async () => {
    const before = await snapshot(w.a.teamId);
    const nul = await raw(w.server.url, "POST", "/api/v1/runs", { key: w.a.keys.agent, body: { taskId: "a\u0000b" } });
    expect(nul.status).toBe(400);
    expect(nul.json.error.message).toContain("body.taskId");
    const lone = await rawText("POST", "/api/v1/runs", w.a.keys.agent, '{"taskId":"ok","title":"x\\ud800y"}');
    expect(lone.status).toBe(400);
    expect(lone.json.error.message).toContain("body.title");
    const low = await rawText("POST", "/api/v1/runs", w.a.keys.agent, '{"taskId":"\\udc00"}');
    expect(low.status).toBe(400);
    const nested = await rawText("POST", "/api/v1/runs", w.a.keys.agent, '{"taskId":"t","native":{"sessionId":"s\\u0000"}}');
    expect(nested.status).toBe(400);
    expect(nested.json.error.message).toContain("body.native.sessionId");
    expect(await snapshot(w.a.teamId)).toEqual(before);
  });

  test("a valid surrogate pair (an emoji) is accepted", async () => {
    const ok = await raw(w.server.url, "POST", "/api/v1/runs", { key: w.a.keys.agent, body: { taskId: "emoji 🚀" } });
    expect(ok.status).toBe(201);
  });

  test("in free-form JSON (complete.detail, observed.evidence): 400, not a database error", async () => {
    const agent = w.client(w.a.keys.agent);
    const run = await agent.createRun({ taskId: "nul-detail" });
    const g = await agent.gate({ runId: run.runId, leaseId: run.leaseId, epoch: run.epoch, operationId: "op-nul", tool: "t" });
    expect(g.decision).toBe("allow");
    const before = await snapshot(w.a.teamId);
    const r = await raw(w.server.url, "POST", "/api/v1/operations/op-nul/complete", {
      key: w.a.keys.agent,
      body: { outcome: "succeeded", detail: { note: "a\u0000" } },
    });
    expect(r.status).toBe(400);
    expect(r.json.error.message).toContain("body.detail.note");
    const k = await rawText("POST", "/api/v1/operations/op-nul/complete", w.a.keys.agent, '{"outcome":"succeeded","detail":{"\\u0000":1}}');
    expect(k.status).toBe(400);
    const ev = await raw(w.server.url, "POST", `/api/v1/runs/${run.runId}/observed`, {
      key: w.a.keys.agent,
      body: { meaning: "signal_accepted", evidence: { x: "\u0000" } },
    });
    expect(ev.status).toBe(400);
    expect(await snapshot(w.a.teamId)).toEqual(before);
  });

  test("in a path id: 400 naming the parameter", async () => {
    for (const [method, path] of [
      ["GET", "/api/v1/runs/a%00b"],
      ["POST", "/api/v1/runs/a%00b/pause"],
      ["GET", "/api/v1/barriers/%ED%A0%80"],
      ["POST", "/api/v1/operations/x%00/admit"],
      ["POST", "/api/v1/operations/x%00/heartbeat"],
      ["POST", "/api/v1/operations/x%00/complete"],
    ] as const) {
      const r = await raw(w.server.url, method, path, {
        key: w.a.keys.admin,
        body:
          method === "POST"
            ? path.endsWith("complete")
              ? { outcome: "failed" }
              : path.endsWith("pause")
                ? { reason: "r" }
                : {}
            : undefined,
      });
      expect(r.status, `${method} ${path}`).toBe(400);
      expect(r.json.error.message, path).toMatch(/^params(\.(runId|barrierId|operationId))?:/);
    }
  });

  test("in a query value: 400", async () => {
    const r = await raw(w.server.url, "GET", "/api/v1/runs?q=%00", { key: w.a.keys.agent });
    expect(r.status).toBe(400);
    expect(r.json.error.message).toContain("query.q");
  });

  test("in a gate field: 400, and the gate writes no decision row", async () => {
    const r = await raw(w.server.url, "POST", "/api/v1/gate", {
      key: w.a.keys.agent,
      body: { runId: "r\u0000", leaseId: "l", epoch: 1, operationId: "o", tool: "t" },
    });
    expect(r.status).toBe(400);
    expect(r.json.error.message).toContain("body.runId");
  });
});

describe("integers bounded to their column", () => {
  test("epoch >= 2^31 on POST /operations and /gate: 400 naming body.epoch", async () => {
    const agent = w.client(w.a.keys.agent);
    const run = await agent.createRun({ taskId: "big-epoch" });
    const before = await snapshot(w.a.teamId);
    for (const path of ["/api/v1/operations", "/api/v1/gate"]) {
      const body = {
        runId: run.runId,
        leaseId: run.leaseId,
        epoch: 2 ** 31,
        operationId: "op-big",
        tool: "t",
        ...(path.endsWith("operations") ? { kind: "queued" } : {}),
      };
      const r = await raw(w.server.url, "POST", path, { key: w.a.keys.agent, body });
      expect(r.status, path).toBe(400);
      expect(r.json.error.message, path).toContain("body.epoch");
      const huge = await rawText("POST", path, w.a.keys.agent, JSON.stringify(body).replace(String(2 ** 31), "1e400"));
      expect(huge.status, path).toBe(400);
    }
    expect(await snapshot(w.a.teamId)).toEqual(before);
  });

  test("version >= 2^31 on the receipt route: 400 naming query.version", async () => {
    const r = await raw(w.server.url, "GET", `/api/v1/barriers/bar_x/receipt?version=${2 ** 31}`, { key: w.a.keys.agent });
    expect(r.status).toBe(400);
    expect(r.json.error.message).toContain("query.version");
  });
});

describe("hot routes check the key and the size before reading the body", () => {
  /** Sends headers and at most `partial` bytes of a body that never completes; resolves with the status. */
  function unfinishedRequest(path: string, headers: Record<string, string>, partial = ""): Promise<{ status: number; body: string }> {
    return new Promise((resolve, reject) => {
      const req = http.request(w.server.url + path, { method: "POST", headers });
      req.on("response", (res) => {
        let body = "";
        res.on("data", (c) => {
          body += c;
        });
        res.on("end", () => {
          resolve({ status: res.statusCode ?? 0, body });
          req.destroy();
        });
      });
      req.on("error", (e) => {
        if (!(e as NodeJS.ErrnoException).code?.startsWith("ECONNRESET")) reject(e);
      });
      req.flushHeaders();
      if (partial) req.write(partial);
    });
  }

  test("a malformed key answers 401 while the body is still unsent", async () => {
    for (const path of ["/api/v1/gate", "/api/v1/operations/op-1/admit", "/api/v1/operations/op-1/heartbeat"]) {
      const r = await unfinishedRequest(
        path,
        { authorization: "Bearer not-a-quiesce-key", "content-type": "application/json", "content-length": "100" },
        "{",
      );
      expect(r.status, path).toBe(401);
      expect(JSON.parse(r.body).error.code).toBe("unauthenticated");
    }
  });

  test("a Content-Length over the limit answers 413 while the body is still unsent", async () => {
    for (const path of ["/api/v1/gate", "/api/v1/operations/op-1/admit", "/api/v1/operations/op-1/heartbeat", "/api/v1/runs"]) {
      const r = await unfinishedRequest(
        path,
        { authorization: `Bearer ${w.a.keys.agent}`, "content-type": "application/json", "content-length": String(10 * 1024 * 1024) },
        "{",
      );
      expect(r.status, path).toBe(413);
      expect(JSON.parse(r.body).error.message).toContain("body");
    }
  });

  test("a chunked body is cut off at the limit (413), not buffered whole", async () => {
    const big = "x".repeat(2 * 1024 * 1024);
    const r = await raw(w.server.url, "POST", "/api/v1/gate", { key: w.a.keys.agent, rawBody: `{"tool":"${big}"}` });
    expect(r.status).toBe(413);
  });
});

describe("run search", () => {
  test("% and _ are literal characters, not wildcards", async () => {
    const agent = w.client(w.a.keys.agent);
    await agent.createRun({ taskId: "search-100%-done" });
    await agent.createRun({ taskId: "search-plain" });
    await agent.createRun({ taskId: "searchXunderscore" });
    const pct = await raw(w.server.url, "GET", `/api/v1/runs?q=${encodeURIComponent("%")}`, { key: w.a.keys.agent });
    expect(pct.status).toBe(200);
    expect(pct.json.runs.map((r: { taskId: string }) => r.taskId)).toEqual(["search-100%-done"]);
    const us = await raw(w.server.url, "GET", `/api/v1/runs?q=${encodeURIComponent("search_")}`, { key: w.a.keys.agent });
    expect(us.json.runs.map((r: { taskId: string }) => r.taskId)).toEqual([]);
    const bs = await raw(w.server.url, "GET", `/api/v1/runs?q=${encodeURIComponent("\\")}`, { key: w.a.keys.agent });
    expect(bs.status).toBe(200);
    expect(bs.json.runs).toEqual([]);
  });
});
