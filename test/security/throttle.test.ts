// Sign-in and API-key throttling, kept in PostgreSQL, that no stranger can turn into a lock-out
// (docs/security/identity.md#throttling): bad API keys are refused per source address while that address's valid
// keys are served; sign-in blocks an account × address pair, slows an account down without blocking it;
// the source address is the socket's peer unless that peer is a trusted proxy (real HTTP, real sockets
// bound to different loopback addresses).
import http from "node:http";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { prisma } from "../../lib/platform/db/prisma";
import { passwordGate, recordSignIn, signInWait } from "../../lib/modules/members/sign-in";
import { makeWorld, type World } from "../api/fixtures";

let w: World;
beforeAll(async () => {
  process.env.QUIESCE_BAD_KEY_FREE_FAILURES = "3";
  process.env.QUIESCE_SIGNIN_FREE_FAILURES = "5";
  w = await makeWorld();
});
afterAll(async () => {
  await w?.close();
});

interface Answer {
  status: number;
  retryAfter: number;
  json: { error?: { code: string } } & Record<string, unknown>;
}

/** One HTTP call from a chosen local (loopback) address: the server sees it as the socket's peer. */
function call(
  url: string,
  opts: { method?: string; key?: string; headers?: Record<string, string>; body?: unknown; from?: string },
): Promise<Answer> {
  const body = opts.body === undefined ? undefined : JSON.stringify(opts.body);
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      {
        method: opts.method ?? "GET",
        localAddress: opts.from,
        agent: false,
        headers: {
          ...(opts.key ? { authorization: `Bearer ${opts.key}` } : {}),
          ...(body ? { "content-type": "application/json", "content-length": String(Buffer.byteLength(body)) } : {}),
          ...opts.headers,
        },
      },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (c: string) => (text += c));
        res.on("end", () =>
          resolve({ status: res.statusCode ?? 0, retryAfter: Number(res.headers["retry-after"] ?? 0), json: text ? JSON.parse(text) : {} }),
        );
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

const badKeys = async (n: number, opts: { from?: string; headers?: Record<string, string> } = {}) => {
  const statuses: number[] = [];
  for (let i = 0; i < n; i++)
    statuses.push((await call(`${w.server.url}/api/v1/runs`, { key: `qk_agent_madeup${i}x${Date.now()}`, ...opts })).status);
  return statuses;
};

const failures = async (key: string) => (await prisma().authThrottle.findUnique({ where: { key } }))?.failures ?? 0;

describe("sign-in", () => {
  test("six wrong passwords from six addresses do not block the owner's address; the account is only slowed down, boundedly", async () => {
    const email = `owner.${Date.now()}@example.test`;
    for (let i = 1; i <= 6; i++) expect(await recordSignIn({ email, address: `10.0.0.${i}`, ok: false, provider: "credentials" })).toBe(0);
    // From the owner's own address: not blocked (before this change the account was: 2 s, 4 s … up to 15 min).
    expect(await signInWait(email, "10.7.7.7")).toBe(0);
    const gate = await passwordGate(email, "10.7.7.7");
    expect(gate.blockedSeconds).toBe(0);
    expect(gate.delayMs).toBeGreaterThan(0);
    // Many more failures elsewhere: still no block, and the delay stops at its bound.
    for (let i = 10; i < 30; i++) await recordSignIn({ email, address: `10.0.0.${i}`, ok: false, provider: "credentials" });
    expect(await passwordGate(email, "10.7.7.7")).toEqual({ blockedSeconds: 0, delayMs: 3000 });
    const audited = await prisma().auditEvent.count({ where: { teamId: null, action: "user.signin_failed", target: email } });
    expect(audited).toBe(26);
  });

  test("one address guessing one account: that pair backs off 2 s, 4 s …; the owner elsewhere is untouched; success clears the pair", async () => {
    const email = `victim.${Date.now()}@example.test`;
    const addr = `10.4.${Date.now() % 250}.1`;
    for (let i = 1; i <= 5; i++) expect(await recordSignIn({ email, address: addr, ok: false, provider: "credentials" })).toBe(0);
    expect(await recordSignIn({ email, address: addr, ok: false, provider: "credentials" })).toBe(2);
    expect(await signInWait(email, addr)).toBeGreaterThanOrEqual(1);
    expect(await recordSignIn({ email, address: addr, ok: false, provider: "credentials" })).toBe(4);
    expect(await signInWait(email, "10.9.9.9")).toBe(0);
    await recordSignIn({ email, address: "10.9.9.9", ok: true, userId: "user_x", provider: "credentials" });
    expect(await prisma().auditEvent.count({ where: { action: "user.signin", target: "user_x" } })).toBe(1);
    expect(await failures(`account-address:${email}|10.9.9.9`)).toBe(0);
    expect(await failures(`account-address:${email}|${addr}`)).toBe(7);
  });

  test("one address trying many accounts is throttled by address", async () => {
    const addr = `10.1.${Date.now() % 250}.7`;
    for (let i = 0; i < 6; i++)
      await recordSignIn({ email: `spray${i}.${Date.now()}@example.test`, address: addr, ok: false, provider: "credentials" });
    expect(await signInWait(`fresh.${Date.now()}@example.test`, addr)).toBeGreaterThan(0);
  });

  test("the sign-in endpoint answers 429 with Retry-After while the pair is blocked, before looking at the password", async () => {
    const email = `blocked.${Date.now()}@example.test`;
    for (let i = 0; i < 6; i++) await recordSignIn({ email, address: "10.2.0.1", ok: false, provider: "credentials" });
    const { POST } = await import("../../app/api/auth/[...nextauth]/route");
    const res = await POST(
      new Request("http://localhost/api/auth/callback/credentials", {
        method: "POST",
        // What the web front (lib/start/web-front.ts) hands Next: the address it decided, as the only entry.
        headers: { "content-type": "application/x-www-form-urlencoded", "x-forwarded-for": "10.2.0.1" },
        body: new URLSearchParams({ email, password: "whatever", csrfToken: "x", json: "true" }).toString(),
      }),
      { params: Promise.resolve({ nextauth: ["callback", "credentials"] }) },
    );
    expect(res.status).toBe(429);
    expect(Number(res.headers.get("retry-after"))).toBeGreaterThan(0);
    const body = await res.json();
    expect(new URL(body.url).searchParams.get("error")).toBe("Throttled");
  });
});

describe("bad API keys (the API process, real sockets)", () => {
  test("made-up keys from one anonymous client (no X-Forwarded-For) never lock out a valid key of any team", async () => {
    const from = "127.0.0.2";
    expect(await badKeys(6, { from })).toEqual([401, 401, 401, 429, 429, 429]);
    const refused = await call(`${w.server.url}/api/v1/runs`, { key: "qk_agent_onemore", from });
    expect(refused.status).toBe(429);
    expect(refused.retryAfter).toBeGreaterThan(0);
    expect(refused.json.error?.code).toBe("rate_limited");
    // The same client's valid keys, both teams: gate, reads, registration, heartbeat are served.
    for (const team of [w.a, w.b]) {
      const run = await call(`${w.server.url}/api/v1/runs`, { method: "POST", key: team.keys.agent, from, body: { taskId: "throttle" } });
      expect(run.status).toBe(201);
      const { runId, leaseId } = run.json as { runId: string; leaseId: string };
      const gate = await call(`${w.server.url}/api/v1/gate`, {
        method: "POST",
        key: team.keys.agent,
        from,
        body: { runId, leaseId, epoch: 1, operationId: `op-${runId}`, tool: "t" },
      });
      expect(gate.status).toBe(200);
      expect(gate.json.decision).toBe("allow");
      const hb = await call(`${w.server.url}/api/v1/operations/op-${runId}/heartbeat`, {
        method: "POST",
        key: team.keys.agent,
        from,
        body: {},
      });
      expect(hb.status).toBe(200);
      expect((await call(`${w.server.url}/api/v1/runs`, { key: team.keys.operator, from })).status).toBe(200);
    }
    // …while its bad keys are still refused, counted against the socket's address, not "unknown".
    expect(await badKeys(1, { from })).toEqual([429]);
    expect(await failures(`key-address:${from}`)).toBeGreaterThanOrEqual(4);
    expect(await failures("key-address:unknown")).toBe(0);
    expect(
      await prisma().auditEvent.count({ where: { teamId: null, action: "apikey.address_blocked", target: from } }),
    ).toBeGreaterThanOrEqual(1);
  });

  test("X-Forwarded-For and Forwarded from an untrusted peer are ignored: the socket's address is counted", async () => {
    const from = "127.0.0.3";
    const spoof = { "x-forwarded-for": "203.0.113.77", forwarded: "for=203.0.113.78" };
    expect(await badKeys(5, { from, headers: spoof })).toEqual([401, 401, 401, 429, 429]);
    // Three free, the fourth starts the block; while this process knows of it, bad keys are answered without a write.
    expect(await failures(`key-address:${from}`)).toBe(4);
    expect(await failures("key-address:203.0.113.77")).toBe(0);
    expect(await failures("key-address:203.0.113.78")).toBe(0);
    // Rotating the header changes nothing: still this socket's address, still 429 for bad keys.
    expect(await badKeys(2, { from, headers: { "x-forwarded-for": "198.51.100.1" } })).toEqual([429, 429]);
    // A good key sent with the blocked-looking header is served.
    const good = await call(`${w.server.url}/api/v1/runs`, { key: w.a.keys.agent, from, headers: { "x-forwarded-for": "203.0.113.77" } });
    expect(good.status).toBe(200);
  });

  test("a trusted proxy's header is believed, hop by hop; the same header from another peer is not", async () => {
    const before = process.env.QUIESCE_TRUSTED_PROXIES;
    process.env.QUIESCE_TRUSTED_PROXIES = "127.0.0.4, 10.20.0.0/16";
    try {
      // Through the proxy (127.0.0.4) and an inner trusted hop: the client is the rightmost untrusted entry.
      const xff = { "x-forwarded-for": "192.0.2.1, 198.51.100.20, 10.20.3.4" };
      expect(await badKeys(4, { from: "127.0.0.4", headers: xff })).toEqual([401, 401, 401, 429]);
      expect(await failures("key-address:198.51.100.20")).toBe(4);
      expect(await failures("key-address:127.0.0.4")).toBe(0);
      expect(await failures("key-address:192.0.2.1")).toBe(0);
      // Another client behind the same proxy is its own address: not throttled by the first one's keys.
      expect(await badKeys(1, { from: "127.0.0.4", headers: { "x-forwarded-for": "198.51.100.21" } })).toEqual([401]);
      // The same header straight from an untrusted peer is that peer.
      expect(await badKeys(1, { from: "127.0.0.5", headers: xff })).toEqual([401]);
      expect(await failures("key-address:127.0.0.5")).toBe(1);
      expect(await failures("key-address:198.51.100.20")).toBe(4);
      // The proxy set X-Forwarded-For; a Forwarded header it passed through from the client is not believed.
      expect(await badKeys(1, { from: "127.0.0.4", headers: { forwarded: "for=198.51.100.99" } })).toEqual([401]);
      expect(await failures("key-address:198.51.100.99")).toBe(0);
      expect(await failures("key-address:127.0.0.4")).toBe(1);
    } finally {
      if (before === undefined) delete process.env.QUIESCE_TRUSTED_PROXIES;
      else process.env.QUIESCE_TRUSTED_PROXIES = before;
    }
  });
});
