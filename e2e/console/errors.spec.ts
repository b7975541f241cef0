// What the console answers when it cannot show a page, over HTTP against the production build:
// a page the member's role may not use is a 403 that names the role and who may (not a 404 that
// blames team membership), and an address that does not decode is a 400 with a readable page (not a
// bare 500) — signed in or not — or, on the machine API, a JSON 400.
import { expect, test } from "@playwright/test";
import { signIn } from "../support/session";
import { e2e, USERS } from "../support/env";

test("a page the role may not use is a 403 naming the role; a missing run is still the 404", async ({ page }) => {
  await signIn(page, USERS.viewer);
  const cases = [
    { path: "/webhooks", title: "Viewers can't open Webhooks; ask an admin.", who: "Only admins may open Webhooks." },
    { path: "/keys", title: "Viewers can't open API keys; ask an admin.", who: "Only admins may open API keys." },
    { path: "/people", title: "Viewers can't open People; ask an admin.", who: "Only admins may open People." },
    {
      path: "/audit",
      title: "Viewers can't open the Audit log; ask an admin.",
      who: "Only operators, managers and admins may open the Audit log.",
    },
  ];
  for (const c of cases) {
    const res = await page.goto(c.path);
    expect(res?.status(), c.path).toBe(403);
    const alert = page.getByRole("alert").filter({ hasText: "403" });
    await expect(alert).toContainText(`403 — ${c.title}`);
    await expect(alert).toContainText(c.who);
    await expect(alert).toContainText(`${USERS.viewer}, viewer in team`);
    await expect(page.getByText("a team you are not a member of")).toHaveCount(0);
    // Still inside the console: the header and a way back.
    await expect(page.getByRole("banner")).toContainText(USERS.viewer);
    await expect(alert.getByRole("link", { name: "Back to runs" })).toBeVisible();
  }
  // An operator may read the audit log but not manage webhooks.
  await page.context().clearCookies();
  await signIn(page, USERS.operator);
  expect((await page.goto("/audit"))?.status()).toBe(200);
  expect((await page.goto("/webhooks"))?.status()).toBe(403);
  await expect(page.getByRole("alert").filter({ hasText: "403" })).toContainText("Operators can't open Webhooks; ask an admin.");
  // Something that is not there is still the plain 404.
  const missing = await page.goto("/runs/run_doesnotexist000000");
  expect(missing?.status()).toBe(404);
  await expect(page.getByText("404 — not found")).toBeVisible();
});

test("a malformed address is a 400 with the console's error page, not a bare 500", async ({ page }) => {
  const bad = ["/runs/%E0%A4%A", "/%", "/runs/%", "/receipts/%E0%A4%A", "/barriers/%ZZ", "/reconciliations/%C3%28"];
  const check = async (cookie: string | null) => {
    for (const path of bad) {
      // Raw HTTP: the path goes out exactly as written (a browser might repair it).
      const res = await fetch(`${e2e.baseUrl}${path}`, { redirect: "manual", headers: cookie ? { cookie } : {} });
      const body = await res.text();
      expect(res.status, `${path} (${cookie ? "signed in" : "signed out"})`).toBe(400);
      expect(res.headers.get("content-type")).toContain("text/html");
      expect(body).toContain("400 — this address is not valid");
      expect(body).toContain('href="/runs"');
      expect(body).not.toContain("Internal Server Error");
      // The proxy's security headers are on it like on every page.
      expect(res.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
      expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    }
  };
  await check(null);
  await signIn(page, USERS.operator);
  const cookie = (await page.context().cookies()).map((c) => `${c.name}=${c.value}`).join("; ");
  await check(cookie);
  // In the browser it is a readable page with a way back.
  const res = await page.goto("/runs/%E0%A4%A");
  expect(res?.status()).toBe(400);
  await expect(page.getByRole("alert").filter({ hasText: "400" })).toContainText("this address is not valid");
  await page.getByRole("link", { name: "Back to runs" }).click();
  await expect(page.getByRole("heading", { level: 1, name: "Runs" })).toBeVisible();
  // A well-formed but odd address is not caught by this: it is an ordinary 404.
  expect((await page.goto("/runs/%E0%A4%A4"))?.status()).toBe(404);

  // The machine API: a JSON 400 in its error shape; a percent-encoded path that decodes still works.
  const auth = { authorization: `Bearer ${e2e.keys().agent!.secret}` };
  for (const path of ["/api/v1/runs/%E0%A4%A", "/api/v1/runs/%", "/api/v1/runs/%ZZ/events"]) {
    const res = await fetch(`${e2e.baseUrl}${path}`, { headers: auth });
    expect(res.status, path).toBe(400);
    expect(await res.json()).toMatchObject({ error: { code: "bad_request" } });
  }
  const encoded = await fetch(`${e2e.baseUrl}/api/v1/runs/run%5Fdoesnotexist000000`, { headers: auth });
  expect(encoded.status).toBe(404);
  expect(await encoded.json()).toMatchObject({ error: { code: "not_found" } });
  expect((await fetch(`${e2e.baseUrl}/api/v1/runs/run_doesnotexist000000`, { headers: auth })).status).toBe(404);
});
