// Deny (docs/approvals-console.md): an operator denies a held call with a note; the card leaves the queue,
// recent decisions say who denied it and why, and the gate answers approval_denied for that call.
import { expect, test } from "@playwright/test";
import { signIn } from "../support/session";
import { USERS } from "../support/env";
import { uid } from "../support/api";
import { closeDb, one } from "../support/db";
import { ask, disablePolicy, enablePolicy, runTree } from "../support/policy";

const TOOL = "e2e.deny.drop_table";

test.beforeAll(async () => {
  await enablePolicy(
    { rules: [{ name: "e2e-deny", tool: "e2e.deny.*", effect: "require_approval", approval: { ttlSeconds: 600 } }] },
    "e2e: deny journey",
  );
});
test.afterAll(async () => {
  await disablePolicy("e2e: deny journey done");
  await closeDb();
});

test("an operator denies a held call with a note, and the gate answers approval_denied", async ({ page }) => {
  const { child } = await runTree("deny journey");
  const operationId = uid("op");
  const held = await ask(child, operationId, TOOL, { table: "customers" });
  expect(held).toMatchObject({ decision: "hold", reason: "awaiting_approval" });

  await signIn(page, USERS.operator);
  await page.goto("/approvals");
  const card = page.locator(`[data-approval="${held.approvalId}"]`);
  await expect(card).toContainText('"table": "customers"');
  await card.getByLabel(/Note/).fill("not the customers table");
  await card.getByRole("button", { name: "Deny" }).click();
  await expect(page.getByRole("status").filter({ hasText: `Denied ${TOOL}` })).toBeVisible();
  await expect(card).toHaveCount(0);
  const row = page.locator(`[data-decided="${held.approvalId}"]`);
  await expect(row).toContainText("Denied by");
  await expect(row).toContainText("not the customers table");

  expect(await one("SELECT state, note FROM approvals WHERE id = $1", [held.approvalId])).toEqual({
    state: "denied",
    note: "not the customers table",
  });
  expect(await ask(child, operationId, TOOL, { table: "customers" })).toMatchObject({ decision: "deny", reason: "approval_denied" });
});
