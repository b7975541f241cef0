// The glossary (docs/console.md#glossary): linked from the navigation, one anchored entry per word
// the console uses, and inline explanations on the run, barrier and receipt pages that the keyboard
// reaches, carry the definition as their title and lead to the entry.
import { expect, test } from "@playwright/test";
import { signIn } from "../support/session";
import { e2e, USERS } from "../support/env";
import { uid } from "../support/api";
import { closeDb } from "../support/db";
import { killViaApi, receiptVersion } from "../support/kill";

test.afterAll(closeDb);

const IDS = [
  "epoch",
  "lease",
  "half-open",
  "admit",
  "quiet-period",
  "late-requests-denied",
  "cancel-unacknowledged",
  "aborted-unknown",
  "barrier",
  "receipt",
  "reconciliation",
  "recovery",
  "restart",
  "stopped-and-quiet",
  "stop-incomplete",
  "approval",
  "budget",
  "policy",
  "reservation",
  "voided",
];

test("the glossary defines every term, and the run, barrier and receipt pages explain theirs inline", async ({ page }) => {
  const run = await e2e.agent().createRun({ taskId: uid("gloss"), title: "glossary journey" });
  const barrierId = await killViaApi(run.runId, "e2e: glossary");
  await receiptVersion(barrierId, 1);
  await signIn(page, USERS.viewer);

  await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Glossary" }).click();
  await expect(page.getByRole("heading", { level: 1, name: "Glossary" })).toBeFocused();
  for (const id of IDS) await expect(page.locator(`[id="${id}"] dt`), id).not.toBeEmpty();
  await expect(page.locator('[id="cancel-unacknowledged"]')).toContainText("cancel_unacknowledged");

  // The run page: the epoch explained inline, reachable by Tab, titled with the definition.
  await page.goto(`/runs/${run.runId}`);
  const epoch = page.getByRole("link", { name: "epoch", exact: true });
  await expect(epoch).toHaveAttribute("href", "/glossary#epoch");
  await expect(epoch).toHaveAttribute("title", /only goes up/);
  await expect(page.getByRole("link", { name: "Lease", exact: true })).toHaveAttribute("href", "/glossary#lease");
  await page.getByRole("heading", { level: 1 }).focus();
  for (let i = 0; i < 40 && !(await epoch.evaluate((el) => el === document.activeElement)); i++) await page.keyboard.press("Tab");
  await expect(epoch).toBeFocused();
  // Focused from the keyboard, it shows its definition (generated content, not text of the page).
  expect(await epoch.evaluate((el) => getComputedStyle(el, "::after").content)).toContain("only goes up");
  await page.keyboard.press("Enter");
  await page.waitForURL(/\/glossary#epoch$/);
  await expect(page.locator('[id="epoch"]')).toBeInViewport();

  // The barrier page: the quiet period and late requests denied explained inline.
  await page.goto(`/barriers/${barrierId}`);
  await expect(page.getByRole("link", { name: "late requests denied", exact: true })).toHaveAttribute(
    "href",
    "/glossary#late-requests-denied",
  );
  await expect(page.getByRole("link", { name: "leases", exact: true })).toHaveAttribute("title", /authority a run holds/);

  // The receipt page: the word receipt and the decision explained inline.
  await page.goto(`/receipts/${barrierId}`);
  await expect(page.getByRole("link", { name: "receipt", exact: true })).toHaveAttribute("href", "/glossary#receipt");
  await expect(page.getByRole("link", { name: "what the decision means" })).toHaveAttribute(
    "href",
    /\/glossary#(stopped-and-quiet|stop-incomplete)$/,
  );
});
