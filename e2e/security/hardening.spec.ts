// Hardening in a real browser against the production build: the nonce CSP lets the console's own
// scripts run (and nothing else reports a violation), the sign-in callbackUrl cannot leave the site,
// a session cookie copied before sign-out is dead afterwards, and guessing a password gets 429.
import { randomBytes } from "node:crypto";
import pg from "pg";
import { expect, test } from "@playwright/test";
import { e2e, USERS } from "../support/env";

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

test("50 wrong passwords then the right one (finding 2), shortened: after 8 failures even the right password gets 429", async ({
  playwright,
}) => {
  // A throwaway account with the demo password, so the block touches no other journey; the attempts come
  // from an address of their own (the first X-Forwarded-For entry is the source address).
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
