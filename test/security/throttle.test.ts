// Sign-in and API-key throttling (finding 2 of the hardening review), kept in PostgreSQL: exponential
// back-off per account and per source address, a 429 with the wait, and every attempt audited.
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { prisma } from "../../lib/db/prisma";
import { recordSignIn, signInWait } from "../../lib/dal/sign-in";
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

describe("sign-in", () => {
  test("after 5 failures the account waits 2 s, then 4 s …, even with the right password; success clears it", async () => {
    const email = `victim.${Date.now()}@example.test`;
    for (let i = 1; i <= 5; i++) {
      expect(await signInWait(email, `10.0.0.${i}`)).toBe(0);
      expect(await recordSignIn({ email, address: `10.0.0.${i}`, ok: false, provider: "credentials" })).toBe(0);
    }
    // The sixth failure (from yet another address) starts the back-off for the account.
    expect(await recordSignIn({ email, address: "10.0.1.1", ok: false, provider: "credentials" })).toBe(2);
    expect(await signInWait(email, "10.9.9.9")).toBeGreaterThanOrEqual(1);
    expect(await recordSignIn({ email, address: "10.0.1.2", ok: false, provider: "credentials" })).toBe(4);
    const audited = await prisma().auditEvent.findMany({ where: { teamId: null, action: "user.signin_failed", target: email } });
    expect(audited).toHaveLength(7);
    await recordSignIn({ email, address: "10.0.1.3", ok: true, userId: "user_x", provider: "credentials" });
    expect(await signInWait(email, "10.9.9.9")).toBe(0);
    expect(await prisma().auditEvent.count({ where: { action: "user.signin", target: "user_x" } })).toBe(1);
  });

  test("one address trying many accounts is throttled by address", async () => {
    const addr = `10.1.${Date.now() % 250}.7`;
    for (let i = 0; i < 6; i++)
      await recordSignIn({ email: `spray${i}.${Date.now()}@example.test`, address: addr, ok: false, provider: "credentials" });
    expect(await signInWait(`fresh.${Date.now()}@example.test`, addr)).toBeGreaterThan(0);
  });

  test("the sign-in endpoint answers 429 with Retry-After while blocked, before looking at the password", async () => {
    const email = `blocked.${Date.now()}@example.test`;
    for (let i = 0; i < 6; i++) await recordSignIn({ email, address: "10.2.0.1", ok: false, provider: "credentials" });
    const { POST } = await import("../../app/api/auth/[...nextauth]/route");
    const res = await POST(
      new Request("http://localhost/api/auth/callback/credentials", {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded", "x-forwarded-for": "10.3.0.1" },
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

describe("bad API keys per source address", () => {
  test("past the free allowance the address gets 429 with the wait, even for a good key; other addresses are unaffected", async () => {
    const headers = (key: string, ip: string) => ({ authorization: `Bearer ${key}`, "x-forwarded-for": ip });
    const ip = `10.5.${Date.now() % 250}.9`;
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++)
      statuses.push((await fetch(`${w.server.url}/api/v1/runs`, { headers: headers(`qk_agent_guess${i}`, ip) })).status);
    expect(statuses).toEqual([401, 401, 401, 429, 429]);
    const blocked = await fetch(`${w.server.url}/api/v1/gate`, {
      method: "POST",
      headers: { ...headers(w.a.keys.agent, ip), "content-type": "application/json" },
      body: "{}",
    });
    expect(blocked.status).toBe(429);
    expect(Number(blocked.headers.get("retry-after"))).toBeGreaterThan(0);
    expect((await blocked.json()).error.code).toBe("rate_limited");
    const elsewhere = await fetch(`${w.server.url}/api/v1/runs`, { headers: headers(w.a.keys.agent, "10.6.0.1") });
    expect(elsewhere.status).toBe(200);
    const row = await prisma().authThrottle.findUniqueOrThrow({ where: { key: `key-address:${ip}` } });
    expect(row.failures).toBeGreaterThanOrEqual(4);
    expect(
      await prisma().auditEvent.count({ where: { teamId: null, action: "apikey.address_blocked", target: ip } }),
    ).toBeGreaterThanOrEqual(1);
  });
});
