// A reviewer (viewer role) opens a receipt link from a review packet: sign-in first, then straight to
// the receipt; the decision, the verified digest, JSON and YAML downloads and the print layout.
import { createHash } from "node:crypto";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { expect, test } from "@playwright/test";
import { parse as parseYaml } from "yaml";
import { e2e, USERS } from "../support/env";
import { liveRun } from "../support/live-run";
import { killViaApi, receiptVersion } from "../support/kill";
import { closeDb } from "../support/db";
import { capture } from "../support/screenshots";
import { DECISION_WORDS, wordFor } from "../../lib/control/stop-words";

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

  await expect(page.getByRole("heading", { level: 1 })).toContainText(wordFor(DECISION_WORDS, receipt.decision));
  await expect(page.getByRole("heading", { name: "✓ Digest verified" })).toBeVisible();
  await expect(page.getByLabel("sha256 digest")).toHaveText(`sha256:${receipt.digest}`);
  await expect(page.getByTestId("receipt-signature")).toHaveText(/^✓ signature valid \(key ed25519:[0-9a-f]{32}\)$/);
  await expect(page.getByText(run.runId).first()).toBeVisible();
  await expect(page.locator(".copy-link code")).toHaveText(`${e2e.baseUrl}/receipts/${barrierId}`);

  const [json] = await Promise.all([page.waitForEvent("download"), page.getByRole("link", { name: "Download JSON" }).click()]);
  expect(json.suggestedFilename()).toBe(`stop-receipt-${barrierId}-v1.json`);
  const body = JSON.parse(readFileSync((await json.path())!, "utf8")) as Record<string, unknown>;
  expect(body).toMatchObject({ barrier_id: barrierId, run_id: run.runId, decision: receipt.decision, digest: receipt.digest });
  const [yaml] = await Promise.all([page.waitForEvent("download"), page.getByRole("link", { name: "Download YAML" }).click()]);
  // Same shape as the API's YAML (one serializer): the body under `stop_receipt`.
  expect(parseYaml(readFileSync((await yaml.path())!, "utf8")).stop_receipt).toEqual(body);

  // The signed envelope, verified OFFLINE by the CLI with only the published public key.
  const [dsse] = await Promise.all([page.waitForEvent("download"), page.getByRole("link", { name: "Download signed envelope" }).click()]);
  expect(dsse.suggestedFilename()).toBe(`stop-receipt-${barrierId}-v1.dsse.json`);
  const keys = (await (await page.request.get("/.well-known/quiesce/keys.json")).json()) as {
    keys: { public_key_pem: string; current: boolean }[];
  };
  const dir = mkdtempSync(path.join(tmpdir(), "quiesce-e2e-verify-"));
  writeFileSync(path.join(dir, "pub.pem"), keys.keys.find((k) => k.current)!.public_key_pem);
  const verify = spawnSync(
    process.execPath,
    ["--conditions=react-server", "--import", "tsx", "bin/quiesce.ts", "verify", (await dsse.path())!, "--key", path.join(dir, "pub.pem")],
    { encoding: "utf8" },
  );
  expect(verify.status, verify.stderr).toBe(0);
  expect(verify.stdout).toContain(`receipt ${barrierId} v1 digest sha256:${receipt.digest}, signature valid`);

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
