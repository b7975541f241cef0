// Changing one's password in the console (docs/security/identity.md#password-change): from the user's menu to
// the account page; a wrong current password is refused naming the field; the change keeps this browser
// signed in, ends every other session of the user, and only the new password signs in afterwards.
import { expect, test } from "@playwright/test";
import { e2e } from "../support/env";
import { query, throwawayUser } from "../support/peer";

test("change password: this session stays, another session of the user ends, the new password signs in", async ({ browser, page }) => {
  const { id, email } = await throwawayUser("passwd");
  const signIn = async (p: typeof page, password: string) => {
    await p.goto("/signin");
    await p.getByLabel("Email").fill(email);
    await p.getByLabel("Password").fill(password);
    await p.getByRole("button", { name: "Sign in" }).click();
  };
  await signIn(page, e2e.password);
  await page.waitForURL(/\/runs/);
  const other = await browser.newContext();
  const otherPage = await other.newPage();
  await signIn(otherPage, e2e.password);
  await otherPage.waitForURL(/\/runs/);
  expect((await other.request.get("/api/console/runs")).status()).toBe(200);

  // The user's menu: the email in the header opens the account page.
  await page.getByRole("banner").getByRole("link", { name: email }).click();
  await page.waitForURL(/\/account$/);
  await expect(page.getByRole("heading", { name: "Change password" })).toBeVisible();

  const newPassword = `new-${Date.now()}-pw`;
  await page.getByLabel("Current password").fill("not-my-password");
  await page.getByLabel("New password", { exact: true }).fill(newPassword);
  await page.getByLabel("New password again").fill(newPassword);
  await page.getByRole("button", { name: "Change password" }).click();
  await expect(page.getByRole("alert").filter({ hasText: "currentPassword" })).toContainText("not your current password");

  await page.getByLabel("Current password").fill(e2e.password);
  await page.getByLabel("New password", { exact: true }).fill(newPassword);
  await page.getByLabel("New password again").fill(newPassword);
  await page.getByRole("button", { name: "Change password" }).click();
  await expect(page.getByRole("status").filter({ hasText: "Password changed" })).toBeVisible();

  // This browser is still signed in; the other session has ended.
  expect((await page.request.get("/api/console/runs")).status()).toBe(200);
  await page.goto("/runs");
  await expect(page.getByRole("banner")).toContainText(email);
  expect((await other.request.get("/api/console/runs")).status()).toBe(401);
  await other.close();

  const audit = await query<{ action: string }>(
    "SELECT action FROM audit_events WHERE target = $1 AND action LIKE 'user.password_change%' ORDER BY id",
    [id],
  );
  expect(audit.map((a) => a.action)).toEqual(["user.password_change_failed", "user.password_change"]);

  // Only the new password signs in now.
  const fresh = await browser.newContext();
  const freshPage = await fresh.newPage();
  await signIn(freshPage, e2e.password);
  await expect(freshPage).toHaveURL(/\/signin/);
  await signIn(freshPage, newPassword);
  await freshPage.waitForURL(/\/runs/);
  await fresh.close();
});
