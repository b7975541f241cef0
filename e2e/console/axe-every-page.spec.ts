// axe-core finds nothing on any console page (docs/console.md#keyboard-and-small-screens): one journey visits
// every page with data on it — a killed run, its barrier and receipt, the lists, the admin pages, the
// glossary — and checks each one.
import { expect, test } from "@playwright/test";
import { signIn } from "../support/session";
import { e2e, USERS } from "../support/env";
import { uid } from "../support/api";
import { closeDb } from "../support/db";
import { killViaApi, receiptVersion } from "../support/kill";
import { expectNoAxeViolations } from "../support/axe";

test.afterAll(closeDb);

test("every console page has zero axe violations", async ({ page }) => {
  test.setTimeout(180_000);
  const run = await e2e.agent().createRun({ taskId: uid("axe"), title: "axe journey" });
  const barrierId = await killViaApi(run.runId, "e2e: axe every page");
  await receiptVersion(barrierId, 1);
  await signIn(page, USERS.admin);
  const pages = [
    "/runs",
    `/runs/${run.runId}`,
    `/barriers/${barrierId}`,
    `/receipts/${barrierId}`,
    "/reconciliations",
    "/approvals",
    "/policies",
    "/stops",
    "/keys",
    "/people",
    "/webhooks",
    "/audit",
    "/account",
    "/glossary",
  ];
  for (const path of pages) {
    await page.goto(path);
    await expect(page.getByRole("heading", { level: 1 })).toBeVisible();
    await expectNoAxeViolations(page);
  }
});
