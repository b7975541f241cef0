// An admin creates an API key (the secret is shown once), the key works against the machine API,
// the admin revokes it and the very next call is refused; the audit log shows both writes.
import { expect, test } from "@playwright/test";
import { signIn } from "../support/session";
import { e2e, USERS } from "../support/env";
import { one, closeDb } from "../support/db";
import { capture } from "../support/screenshots";

test.afterAll(closeDb);

test("an admin creates a key, sees its secret once, and revokes it", async ({ page }) => {
  await signIn(page, USERS.admin);
  await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "API keys" }).click();
  await page.waitForURL(/\/keys/);
  const name = `ci-agent-${Date.now().toString(36)}`;
  await page.getByLabel("Name").fill(name);
  await page.getByLabel("Kind").selectOption("agent");
  await page.getByRole("button", { name: "Create key" }).click();
  const secret = (await page.getByTestId("new-key-secret").textContent())!.trim();
  expect(secret).toMatch(/^qk_agent_/);
  await capture(page, "api-keys");

  const row = await one<{ id: string; secret_hash: string; kind: string }>(
    "SELECT id, secret_hash, kind::text FROM api_keys WHERE name = $1",
    [name],
  );
  expect(row.kind).toBe("agent");
  expect(row.secret_hash).not.toContain(secret); // only a hash is stored

  const list = () => fetch(`${e2e.baseUrl}/api/v1/runs?limit=1`, { headers: { authorization: `Bearer ${secret}` } });
  expect((await list()).status).toBe(200);

  await page.getByRole("button", { name: "Done" }).click();
  await expect(page.getByTestId("new-key-secret")).toHaveCount(0); // never shown again
  await page.locator("tr", { hasText: name }).getByRole("button", { name: "Revoke" }).click();
  const dialog = page.getByRole("dialog", { name: new RegExp(`Revoke key “${name}”`) });
  await dialog.getByRole("button", { name: "Revoke key" }).click();
  await expect(page.locator("tr", { hasText: name })).toContainText("revoked");
  expect((await list()).status).toBe(401);
  const revoked = await one<{ revoked: boolean }>("SELECT revoked_at IS NOT NULL AS revoked FROM api_keys WHERE id = $1", [row.id]);
  expect(revoked.revoked).toBe(true);

  await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Audit log" }).click();
  await page.waitForURL(/\/audit/);
  await expect(page.getByText("Hash chain intact")).toBeVisible();
  await page.getByLabel("Target").fill(row.id);
  await page.getByRole("button", { name: "Filter" }).click();
  await expect(page.locator("tbody tr")).toHaveCount(2);
  await expect(page.locator("tbody")).toContainText("key.create");
  await expect(page.locator("tbody")).toContainText("key.revoke");
  await page.goto("/audit");
  await capture(page, "audit-log");
});
