// How long a client may take to send a request (lib/start/http-timeouts.mjs, docs/security/hardening.md#input):
// a body trickled at 1 byte / 2 s, headers trickled, and a body that stops, each against real servers —
// the API process's server (lib/api/node-server.ts) and a server made the way `next start` makes its
// own, in a separate node process with the preload `npm start` gives the web app. An event stream is
// not cut by these bounds: they cover receiving the request only.
import net from "node:net";
import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startApiServer, type ApiServer } from "../support/api-server";
import { httpBoundsImport } from "../../lib/start/plan";
import { makeKey, makeRun, makeTeam } from "../support/fixtures";

const ROOT = path.resolve(import.meta.dirname, "../..");
const BOUNDS = { QUIESCE_HTTP_HEADERS_TIMEOUT_MS: "2000", QUIESCE_HTTP_REQUEST_TIMEOUT_MS: "5000", QUIESCE_HTTP_BODY_IDLE_MS: "3000" };

interface Trickle {
  /** ms from the first byte until the server closed the connection, or null when it was still open at the end. */
  closedAfter: number | null;
  answer: string;
}

/**
 * Opens a connection, sends `head` `every` ms one byte at a time (or at once when `every` is 0), then
 * `body` one byte every `bodyEvery` ms (0: stop sending), and watches for up to `maxMs`.
 */
function trickle(url: string, opts: { head: string; every?: number; body?: string; bodyEvery: number; maxMs: number }): Promise<Trickle> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = net.connect(Number(port), hostname);
    const started = Date.now();
    let answer = "";
    let timer: NodeJS.Timeout | undefined;
    const finish = (closed: boolean) => {
      clearTimeout(timer);
      clearTimeout(giveUp);
      socket.destroy();
      resolve({ closedAfter: closed ? Date.now() - started : null, answer });
    };
    const giveUp = setTimeout(() => finish(false), opts.maxMs);
    socket.on("data", (d) => (answer += d.toString("latin1")));
    socket.on("close", () => finish(true));
    socket.on("error", () => undefined);
    const bytes = [...(opts.every ? opts.head : "")];
    const bodyBytes = [...(opts.body ?? "")];
    const step = () => {
      if (socket.destroyed) return;
      if (bytes.length) {
        socket.write(bytes.shift()!);
        timer = setTimeout(step, opts.every);
      } else if (bodyBytes.length && opts.bodyEvery) {
        socket.write(bodyBytes.shift()!);
        timer = setTimeout(step, opts.bodyEvery);
      }
    };
    socket.on("connect", () => {
      if (!opts.every) socket.write(opts.head);
      if (!opts.bodyEvery && bodyBytes.length) socket.write(bodyBytes.shift()!);
      step();
    });
  });
}

const BODY = JSON.stringify({ taskId: "trickled", title: "x".repeat(40) });
/** A POST the server will wait on the body of (the API answers a request without a good key before reading it). */
const post = (key = "") =>
  `POST /api/v1/runs HTTP/1.1\r\nHost: 127.0.0.1\r\n${key ? `Authorization: Bearer ${key}\r\n` : ""}` +
  `Content-Type: application/json\r\nContent-Length: ${BODY.length}\r\n\r\n`;

/** The three refusals every server under test must show, with BOUNDS. */
function boundsSuite(name: string, url: () => string, key: () => string = () => "") {
  describe(name, () => {
    test("a body trickled at 1 byte / 2 s: closed with 408 at the request bound, not Node's 300 s", async () => {
      const r = await trickle(url(), { head: post(key()), body: BODY, bodyEvery: 2000, maxMs: 14_000 });
      expect(r.closedAfter, "still open 14 s later").not.toBeNull();
      expect(r.closedAfter!).toBeLessThan(5000 + 2500);
      expect(r.answer).toMatch(/^HTTP\/1\.1 408 /);
    });

    test("headers trickled: closed at the headers bound", async () => {
      const r = await trickle(url(), { head: post(key()) + BODY, every: 300, bodyEvery: 0, maxMs: 12_000 });
      expect(r.closedAfter, "still open 12 s later").not.toBeNull();
      expect(r.closedAfter!).toBeLessThan(2000 + 2500);
    });

    test("a body that stops arriving: closed at the body-idle bound, before the request bound", async () => {
      const r = await trickle(url(), { head: post(key()), body: BODY, bodyEvery: 0, maxMs: 12_000 });
      expect(r.closedAfter, "still open 12 s later").not.toBeNull();
      expect(r.closedAfter!).toBeLessThan(5000);
    });
  });
}

describe("the API process's server, bounds from the settings", () => {
  let api: ApiServer;
  let agent = "";
  let saved: Record<string, string | undefined> = {};
  beforeAll(async () => {
    agent = (await makeKey((await makeTeam("timeouts")).teamId, { kind: "agent" })).secret;
    saved = Object.fromEntries(Object.keys(BOUNDS).map((k) => [k, process.env[k]]));
    Object.assign(process.env, BOUNDS);
    api = await startApiServer();
  });
  afterAll(async () => {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
    await api?.close();
  });
  boundsSuite(
    "quiesce api",
    () => api.url,
    () => agent,
  );

  test("an event stream outlives every bound (they cover receiving the request only)", async () => {
    const { teamId } = await makeTeam("timeouts");
    const key = await makeKey(teamId, { kind: "agent" });
    const run = await makeRun(teamId);
    const ctl = new AbortController();
    const res = await fetch(`${api.url}/api/v1/runs/${run.runId}/events`, {
      headers: { authorization: `Bearer ${key.secret}`, accept: "text/event-stream" },
      signal: ctl.signal,
    });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    let ended = false;
    const reading = (async () => {
      try {
        while (!(await reader.read()).done);
      } catch {
        /* aborted by the test */
      }
      ended = true;
    })();
    // Past the headers (2 s), body-idle (3 s) and request (5 s) bounds.
    await new Promise((r) => setTimeout(r, 7000));
    expect(ended).toBe(false);
    ctl.abort();
    await reading;
  }, 20_000);
});

describe("the web app's server: `next start`'s own http.createServer with the preload npm start adds", () => {
  let child: ChildProcess;
  let url = "";
  beforeAll(async () => {
    // Exactly the --import npm start puts in front of next (lib/start/plan.ts), with BOUNDS as settings.
    const preload = httpBoundsImport(ROOT, BOUNDS);
    // As next's start-server does: http.createServer(listener), no options of its own; it reads the body.
    const server = `require("http").createServer((req, res) => { req.resume(); req.on("end", () => res.end("ok")); })
      .listen(0, "127.0.0.1", function () { console.log("port " + this.address().port); });`;
    child = spawn(process.execPath, [...preload, "-e", server], { stdio: ["ignore", "pipe", "inherit"] });
    url = await new Promise<string>((resolve, reject) => {
      let out = "";
      child.stdout!.on("data", (d) => {
        out += d;
        const m = /port (\d+)/.exec(out);
        if (m) resolve(`http://127.0.0.1:${m[1]}`);
      });
      child.once("exit", (code) => reject(new Error(`server exited ${code}`)));
    });
  });
  afterAll(() => {
    child?.kill();
  });
  boundsSuite("next start (preloaded)", () => url);

  test("an honest request still gets its answer", async () => {
    const res = await fetch(url, { method: "POST", body: BODY });
    expect(await res.text()).toBe("ok");
  });
});
