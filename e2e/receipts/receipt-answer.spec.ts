// The receipt for a reviewer (docs/console.md#pages): the answer first in one sentence derived from the
// signed body (the open items with their owners by name); and the control dialogs say
// their consequences (who owns a kill's unknowns, what half open means).
import { expect, test } from "@playwright/test";
import { signIn } from "../support/session";
import { e2e, USERS } from "../support/env";
import { uid } from "../support/api";
import { closeDb } from "../support/db";
import { killViaApi, receiptVersion } from "../support/kill";

test.afterAll(closeDb);

test("the receipt answers first, in one sentence", async ({ page }) => {
  const run = await e2e.agent().createRun({ taskId: uid("answer"), title: "receipt answer run" });
  const barrierId = await killViaApi(run.runId, "e2e: receipt answer");
  await expect
    .poll(async () => (await receiptVersion(barrierId, 1).catch(() => null))?.decision ?? null, { timeout: 60_000 })
    .not.toBeNull();
  await signIn(page, USERS.viewer);
  await page.goto(`/receipts/${barrierId}`);
  await expect(page.getByTestId("receipt-answer")).toHaveText(/^(Stopped and quiet: .+\.|Not yet quiet: .+\.)$/);
  // The summary names who asked for the stop as a person reads it, never by an internal id.
  const summary = page.getByRole("region", { name: "Summary" });
  await expect(summary).toContainText("Stop requested by");
  await expect(summary).not.toContainText(/\b(user|key):/);
});

test("the kill dialog says who owns the unknowns; the trip dialog says what half open means", async ({ page }) => {
  const run = await e2e.agent().createRun({ taskId: uid("dialogs"), title: "dialog words run" });
  await signIn(page, USERS.operator);
  await page.goto(`/runs/${run.runId}`);
  await page.getByRole("button", { name: "Kill…" }).click();
  const kill = page.getByRole("dialog", { name: "Kill this run" });
  await expect(kill.getByTestId("kill-owner")).toContainText("otherwise to you");
  await kill.getByRole("button", { name: "Cancel" }).click();
  await page.getByRole("button", { name: "Trip breaker" }).click();
  const trip = page.getByRole("dialog", { name: "Trip the breaker" });
  await expect(trip.getByTestId("half-open")).toContainText("admits exactly one call as a probe");
});
