// Signing in through the real form (credentials provider, bcrypt-verified password).
import { expect, type Page } from "@playwright/test";
import { e2e } from "./env";

export async function signIn(page: Page, email: string): Promise<void> {
  await page.goto("/signin");
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill(e2e.password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.waitForURL(/\/runs/);
  await expect(page.getByRole("banner")).toContainText(email);
}
