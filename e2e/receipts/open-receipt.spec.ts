// A reviewer (viewer role) opens a receipt link from a review packet: sign-in first, then straight to
// the receipt; the decision, the verified digest, JSON and YAML downloads and the print layout.
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { expect, test } from "@playwright/test";
import { parse as parseYaml } from "yaml";
import { e2e, USERS } from "../support/env";
import { liveRun } from "../support/live-run";
import { killViaApi, receiptVersion } from "../support/kill";
import { closeDb } from "../support/db";
import { capture } from "../support/screenshots";

test.afterAll(closeDb);

test("a reviewer opens a receipt link, checks the digest and downloads JSON and YAML", async ({ page }) => {
  const { run } = await liveRun("Migrate customer table");
  const barrierId = await killViaApi(run.runId, "migration locked the orders table");
  const receipt = await receiptVersion(barrierId, 1);
  // Independent of the app: the digest is sha256 over the stored canonical text.
  expect(createHash("sha256").update(receipt.canonical).digest("hex")).toBe(receipt.digest);

  // The link from the packet, opened while signed out.
  await page.goto(`/receipts/${barrierId}`);
  await page.waitForURL(/\/signin\?callbackUrl=/);
  await capture(page, "sign-in");
  await page.getByLabel("Email").fill(USERS.viewer);
  await page.getByLabel("Password").fill(e2e.password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.waitForURL(new RegExp(`/receipts/${barrierId}$`));

  await expect(page.getByRole("heading", { level: 1 })).toContainText(receipt.decision.replaceAll("_", " "));
  await expect(page.getByRole("heading", { name: "✓ Digest verified" })).toBeVisible();
  await expect(page.getByLabel("sha256 digest")).toHaveText(`sha256:${receipt.digest}`);
  await expect(page.getByText(run.runId).first()).toBeVisible();
  await expect(page.locator(".copy-link code")).toHaveText(`${e2e.baseUrl}/receipts/${barrierId}`);

  const [json] = await Promise.all([page.waitForEvent("download"), page.getByRole("link", { name: "Download JSON" }).click()]);
  expect(json.suggestedFilename()).toBe(`stop-receipt-${barrierId}-v1.json`);
  const body = JSON.parse(readFileSync((await json.path())!, "utf8")) as Record<string, unknown>;
  expect(body).toMatchObject({ barrier_id: barrierId, run_id: run.runId, decision: receipt.decision, digest: receipt.digest });
  const [yaml] = await Promise.all([page.waitForEvent("download"), page.getByRole("link", { name: "Download YAML" }).click()]);
  // Same shape as the API's YAML (one serializer): the body under `stop_receipt`.
  expect(parseYaml(readFileSync((await yaml.path())!, "utf8")).stop_receipt).toEqual(body);

  // A viewer reads; a viewer gets no controls on the run either.
  await expect(page.getByRole("button", { name: "Kill…" })).toHaveCount(0);

  // Printable: the console chrome disappears on paper, the receipt stays.
  await page.emulateMedia({ media: "print" });
  await expect(page.getByRole("banner")).toBeHidden();
  await expect(page.getByRole("link", { name: "Download JSON" })).toBeHidden();
  await expect(page.getByLabel("sha256 digest")).toBeVisible();
  await page.emulateMedia({ media: "screen" });

  // An unknown version is a 404, like any other missing thing.
  const missing = await page.goto(`/receipts/${barrierId}?version=99`);
  expect(missing?.status()).toBe(404);
});
