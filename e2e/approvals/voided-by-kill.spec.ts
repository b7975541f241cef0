// Voided by kill (docs/approvals-console.md): while an operator has a card open, the run is killed (through the
// API, as `quiesce kill` would). The card leaves every approver's queue at once, recent decisions say it was
// voided because the run was killed, and nothing the card could have said admits the call any more.
import { expect, test } from "@playwright/test";
import { signIn } from "../support/session";
import { USERS } from "../support/env";
import { uid } from "../support/api";
import { closeDb, one } from "../support/db";
import { killViaApi } from "../support/kill";
import { ask, disablePolicy, enablePolicy, runTree } from "../support/policy";

const TOOL = "e2e.void.reserve_preview";

test.beforeAll(async () => {
  await enablePolicy(
    { rules: [{ name: "e2e-void", tool: "e2e.void.*", effect: "require_approval", approval: { ttlSeconds: 600 } }] },
    "e2e: voided-by-kill journey",
  );
});
test.afterAll(async () => {
  await disablePolicy("e2e: voided-by-kill journey done");
  await closeDb();
});

test("a kill voids the open card: it leaves the queue and reads 'voided: the run was killed'", async ({ page }) => {
  const { root, child } = await runTree("voided journey");
  const operationId = uid("op");
  const held = await ask(child, operationId, TOOL);
  expect(held).toMatchObject({ decision: "hold", reason: "awaiting_approval" });

  await signIn(page, USERS.operator);
  await page.goto("/approvals");
  const card = page.locator(`[data-approval="${held.approvalId}"]`);
  await expect(card.getByRole("button", { name: "Approve" })).toBeVisible();

  await killViaApi(root.runId, "e2e: kill while a card is open");
  await expect(card).toHaveCount(0);
  const row = page.locator(`[data-decided="${held.approvalId}"]`);
  await expect(row).toContainText("Voided: the run was killed");
  await expect(row.getByRole("link", { name: "Voided", exact: true })).toHaveAttribute("href", "/glossary#voided");

  expect(await one("SELECT state, void_cause FROM approvals WHERE id = $1", [held.approvalId])).toEqual({
    state: "voided",
    void_cause: "killed",
  });
  expect((await ask(child, operationId, TOOL)).decision).toBe("deny");
});
