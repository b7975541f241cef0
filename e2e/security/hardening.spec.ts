// Hardening in a real browser against the production build: the nonce CSP lets the console's own
// scripts run (and nothing else reports a violation), the sign-in callbackUrl cannot leave the site,
// a session cookie copied before sign-out is dead afterwards, and guessing a password gets 429.
import { randomBytes } from "node:crypto";
import pg from "pg";
import { expect, test } from "@playwright/test";
import { e2e, USERS } from "../support/env";
import { fromPeer, query, signInFromPeer, throwawayUser } from "../support/peer";

test("pages carry a nonce CSP, frame-ancestors 'none' and the other headers, and the console still works under it", async ({ page }) => {
  const violations: string[] = [];
  page.on("console", (m) => {
    if (/Content Security Policy|Refused to (execute|load)/i.test(m.text())) violations.push(m.text());
  });
  const res = await page.goto("/signin");
  const h = res!.headers();
  const csp = h["content-security-policy"] ?? "";
  const nonce = /'nonce-([^']+)'/.exec(csp)?.[1];
  expect(nonce).toBeTruthy();
  expect(csp).toContain("'strict-dynamic'");
  expect(csp).toContain("frame-ancestors 'none'");
  expect(h["x-content-type-options"]).toBe("nosniff");
  expect(h["referrer-policy"]).toBe("strict-origin-when-cross-origin");
  expect(h["permissions-policy"]).toContain("camera=()");
  // A fresh nonce per request, present on Next's own scripts.
  const second = await page.request.get("/signin");
  expect(second.headers()["content-security-policy"]).not.toContain(nonce!);
  expect(await page.locator(`script[nonce]`).count()).toBeGreaterThan(0);
  // Hydrated: the form signs in client-side (fetch + router), which needs the scripts to run.
  await page.getByLabel("Email").fill(USERS.operator);
  await page.getByLabel("Password").fill(e2e.password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.waitForURL(/\/runs/);
  await expect(page.getByRole("banner")).toContainText(USERS.operator);
  expect(violations).toEqual([]);
  const api = await page.request.get("/api/v1/openapi.json");
  expect(api.headers()["x-content-type-options"]).toBe("nosniff");
});

test("callbackUrl: '/\\t/evil.example' and the CR/LF variants stay on the site", async ({ page, baseURL }) => {
  for (const bad of ["/%09/evil.example", "/%0D/evil.example", "/%0A/evil.example"]) {
    const r = await page.request.get(`/signin?callbackUrl=${bad}`);
    expect(r.status(), bad).toBeLessThan(500);
  }
  await page.goto(`/signin?callbackUrl=/%09/evil.example`);
  await page.getByLabel("Email").fill(USERS.viewer);
  await page.getByLabel("Password").fill(e2e.password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.waitForURL(/\/runs/);
  expect(new URL(page.url()).origin).toBe(new URL(baseURL!).origin);
  // Signed in, the sign-in page redirects to the callback — the same rule applies.
  await page.goto(`/signin?callbackUrl=/%09/evil.example`);
  await page.waitForURL(/\/runs/);
  expect(new URL(page.url()).origin).toBe(new URL(baseURL!).origin);
});

test("a session cookie copied before sign-out no longer works after it", async ({ page, browser }) => {
  await page.goto("/signin");
  await page.getByLabel("Email").fill(USERS.manager);
  await page.getByLabel("Password").fill(e2e.password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.waitForURL(/\/runs/);
  const copied = await page.context().cookies();
  const thief = await browser.newContext();
  await thief.addCookies(copied);
  expect((await thief.request.get("/api/console/runs")).status()).toBe(200);
  await page.getByRole("button", { name: /sign out/i }).click();
  await page.waitForURL(/\/signin/);
  expect((await thief.request.get("/api/console/runs")).status()).toBe(401);
  await thief.close();
});

test("50 wrong passwords then the right one, shortened: after 8 failures even the right password gets 429", async ({ playwright }) => {
  // A throwaway account with the demo password, so the block touches no other journey; the attempts come
  // from an address of their own (X-Forwarded-For, through 127.0.0.1, which the e2e setup trusts as a proxy).
  const d = new pg.Client({ connectionString: e2e.databaseUrl });
  await d.connect();
  const id = `user_throttle${randomBytes(6).toString("hex")}`;
  const email = `throttle.${id.slice(13)}@example.test`;
  try {
    await d.query(
      "INSERT INTO users (id, email, name, password_hash) SELECT $1, $2, 'Throttle target', password_hash FROM users WHERE email = $3",
      [id, email, USERS.viewer],
    );
    await d.query("INSERT INTO memberships (id, team_id, user_id, role) SELECT $1, t.id, $2, 'viewer' FROM teams t WHERE t.slug = 'demo'", [
      `mem_throttle${randomBytes(6).toString("hex")}`,
      id,
    ]);
  } finally {
    await d.end();
  }
  const address = `10.${randomBytes(1)[0]}.${randomBytes(1)[0]}.7`;
  const api = await playwright.request.newContext({ baseURL: e2e.baseUrl, extraHTTPHeaders: { "x-forwarded-for": address } });
  const attempt = async (password: string) => {
    const { csrfToken } = (await (await api.get("/api/auth/csrf")).json()) as { csrfToken: string };
    return api.post("/api/auth/callback/credentials", { form: { email, password, csrfToken, json: "true" }, maxRedirects: 0 });
  };
  for (let i = 0; i < 8; i++) expect((await attempt(`wrong-${i}`)).status()).toBeLessThan(500);
  const right = await attempt(e2e.password);
  expect(right.status()).toBe(429);
  expect(Number(right.headers()["retry-after"])).toBeGreaterThan(0);
  expect((await api.storageState()).cookies.some((c) => /next-auth\.session-token/.test(c.name))).toBe(false);
  await api.dispose();
});

test("six wrong passwords from six addresses do not lock the owner out: the right password from their own address signs in", async ({
  playwright,
}) => {
  const { email } = await throwawayUser("owner");
  // Strangers behind the (trusted, 127.0.0.1) proxy, each from an address of its own.
  for (let i = 1; i <= 6; i++) {
    const stranger = await playwright.request.newContext({
      baseURL: e2e.baseUrl,
      extraHTTPHeaders: { "x-forwarded-for": `198.18.${i}.${i}` },
    });
    const { csrfToken } = (await (await stranger.get("/api/auth/csrf")).json()) as { csrfToken: string };
    const res = await stranger.post("/api/auth/callback/credentials", {
      form: { email, password: `wrong-${i}`, csrfToken, json: "true" },
      maxRedirects: 0,
    });
    expect(res.status()).toBeLessThan(429);
    await stranger.dispose();
  }
  const owner = await playwright.request.newContext({ baseURL: e2e.baseUrl, extraHTTPHeaders: { "x-forwarded-for": "198.19.0.1" } });
  const { csrfToken } = (await (await owner.get("/api/auth/csrf")).json()) as { csrfToken: string };
  const res = await owner.post("/api/auth/callback/credentials", {
    form: { email, password: e2e.password, csrfToken, json: "true" },
    maxRedirects: 0,
  });
  expect(res.status()).toBe(200);
  expect((await owner.storageState()).cookies.some((c) => /next-auth\.session-token/.test(c.name))).toBe(true);
  expect((await owner.get("/api/console/runs")).status()).toBe(200);
  await owner.dispose();
});

test("the web port believes X-Forwarded-For only from a trusted proxy: an untrusted peer's header is ignored (sign-in and the API)", async () => {
  const { email } = await throwawayUser("spoof");
  // 127.0.0.2 is not a trusted proxy here: its header names nobody.
  const spoofed = { "x-forwarded-for": "203.0.113.77", forwarded: "for=203.0.113.78" };
  const failed = await signInFromPeer("127.0.0.2", email, "wrong-password", spoofed);
  expect(failed.status).toBeLessThan(429);
  const [row] = await query<{ address: string }>(
    "SELECT after->>'address' AS address FROM audit_events WHERE action = 'user.signin_failed' AND target = $1 ORDER BY id DESC LIMIT 1",
    [email],
  );
  expect(row?.address).toBe("127.0.0.2");
  // Through the proxy (127.0.0.1) the same header is believed.
  await signInFromPeer("127.0.0.1", email, "wrong-password", spoofed);
  const [viaProxy] = await query<{ address: string }>(
    "SELECT after->>'address' AS address FROM audit_events WHERE action = 'user.signin_failed' AND target = $1 ORDER BY id DESC LIMIT 1",
    [email],
  );
  expect(viaProxy?.address).toBe("203.0.113.77");
  // Made-up API keys from the untrusted peer count against it, never against the address it claims,
  // and its valid key is still served (Next's route handlers, through the front).
  const statuses: number[] = [];
  for (let i = 0; i < 25; i++)
    statuses.push(
      (await fromPeer("127.0.0.2", "/api/v1/runs", { headers: { ...spoofed, authorization: `Bearer qk_agent_madeup${i}` } })).status,
    );
  expect(statuses.slice(0, 20).every((s) => s === 401)).toBe(true);
  expect(statuses.slice(21)).toEqual([429, 429, 429, 429]);
  const counted = await query<{ key: string }>(
    "SELECT key FROM auth_throttles WHERE key LIKE 'key-address:%203.0.113%' OR key = 'key-address:127.0.0.2'",
  );
  expect(counted.map((r) => r.key)).toEqual(["key-address:127.0.0.2"]);
  const good = await fromPeer("127.0.0.2", "/api/v1/runs", {
    headers: { ...spoofed, authorization: `Bearer ${e2e.keys().agent!.secret}` },
  });
  expect(good.status).toBe(200);
});
