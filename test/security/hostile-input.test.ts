// Hostile input against the real route handlers over real HTTP (from the hardening
// review): NUL bytes and lone surrogates in any text field or path id, integers past their
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

  test("at any depth (past 64 levels too) in complete.detail: 400 on the API process and through Next's handler; deeper JSON 400", async () => {
    const agent = w.client(w.a.keys.agent);
    const run = await agent.createRun({ taskId: "nul-deep" });
    const g = await agent.gate({ runId: run.runId, leaseId: run.leaseId, epoch: run.epoch, operationId: "op-nul-deep", tool: "t" });
    expect(g.decision).toBe("allow");
    const before = await snapshot(w.a.teamId);
    const nested = (depth: number, leaf: unknown): unknown => {
      let v = leaf;
      for (let i = 0; i < depth; i++) v = { a: v };
      return v;
    };
    // 63 levels under body.detail's "a": the deepest a body may go, NUL at the bottom.
    const deepNul = { outcome: "succeeded", detail: nested(62, "x\u0000") };
    const tooDeep = { outcome: "succeeded", detail: nested(70, "x\u0000") };
    const wayTooDeep = `{"outcome":"succeeded","detail":${"[".repeat(100_000)}${"]".repeat(100_000)}}`;
    const path = "/api/v1/operations/op-nul-deep/complete";
    // Next calls the route module's exported handler with a Web Request: the web port's path.
    const { POST } = (await import("../../app/api/v1/operations/[operationId]/complete/route")) as unknown as {
      POST: (req: Request, ctx: { params: Promise<Record<string, string>> }) => Promise<Response>;
    };
    const viaNext = async (text: string) => {
      const res = await POST(
        new Request(`http://localhost${path}`, {
          method: "POST",
          headers: { authorization: `Bearer ${w.a.keys.agent}`, "content-type": "application/json" },
          body: text,
        }),
        { params: Promise.resolve({ operationId: "op-nul-deep" }) },
      );
      return { status: res.status, json: (await res.json()) as { error: { message: string } } };
    };
    for (const send of [(t: string) => rawText("POST", path, w.a.keys.agent, t), viaNext]) {
      const r = await send(JSON.stringify(deepNul));
      expect(r.status).toBe(400);
      expect(r.json.error.message).toBe(`body.detail${".a".repeat(62)}: must not contain a NUL character`);
      const d = await send(JSON.stringify(tooDeep));
      expect(d.status).toBe(400);
      expect(d.json.error.message).toBe(`body.detail${".a".repeat(63)}: nested deeper than 64 levels`);
      const dd = await send(wayTooDeep);
      expect(dd.status).toBe(400);
      expect(dd.json.error.message).toContain("nested deeper than 64 levels");
    }
    expect(await snapshot(w.a.teamId)).toEqual(before);
  });

  test("at any depth in a server action's argument: the refusal shape naming the field, before the session is read", async () => {
    const { setMemberRoleAction } = await import("../../app/(console)/people/actions");
    let deep: unknown = "x\u0000";
    for (let i = 0; i < 80; i++) deep = [deep];
    expect(await setMemberRoleAction({ userId: "u", role: "viewer", extra: deep })).toEqual({
      ok: false,
      code: "bad_request",
      message: `extra${".0".repeat(63)}: nested deeper than 64 levels`,
    });
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
