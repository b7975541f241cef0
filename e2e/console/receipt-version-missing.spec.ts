// A receipt link pinned to a version past the last one (`?version=n`) is a 404 that says which versions
// exist and links the latest (docs/console.md#pages), not the generic "nothing here".
import { expect, test } from "@playwright/test";
import { signIn } from "../support/session";
import { e2e, USERS } from "../support/env";
import { uid } from "../support/api";
import { closeDb } from "../support/db";
import { killViaApi, receiptVersion } from "../support/kill";

test.afterAll(closeDb);

test("a receipt version past the last one is a 404 naming the versions that exist, with a link to the latest", async ({ page }) => {
  const run = await e2e.agent().createRun({ taskId: uid("version"), title: "version journey" });
  const barrierId = await killViaApi(run.runId, "e2e: a version that does not exist");
  await receiptVersion(barrierId, 1);
  await signIn(page, USERS.viewer);

  const res = await page.goto(`/receipts/${barrierId}?version=99`);
  expect(res?.status()).toBe(404);
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("404 — no version 99 of this receipt");
  await expect(page.getByText(/This receipt has \d+ versions?:/)).toBeVisible();
  await expect(page.getByRole("link", { name: "version 1", exact: true })).toHaveAttribute("href", `/receipts/${barrierId}?version=1`);

  await page.getByRole("link", { name: /^Open the latest, version \d+$/ }).click();
  await page.waitForURL(new RegExp(`/receipts/${barrierId}$`));
  await expect(page.getByTestId("receipt-answer")).toBeVisible();

  // Another team's barrier, or none, stays the plain 404 that says nothing about it.
  const other = await page.goto(`/receipts/bar_doesnotexist?version=99`);
  expect(other?.status()).toBe(404);
  await expect(page.getByText("This receipt has")).toHaveCount(0);
});
