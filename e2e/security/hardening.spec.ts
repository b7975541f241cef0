// Hardening in a real browser against the production build: the nonce CSP lets the console's own
// scripts run (and nothing else reports a violation), the sign-in callbackUrl cannot leave the site,
// and a session cookie copied before sign-out is dead afterwards.
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
