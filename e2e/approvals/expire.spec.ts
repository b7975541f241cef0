// Expire (docs/approvals-console.md): nobody answers before the rule's deadline (10 s, the shortest a rule may
// set). The card counts down and leaves the queue by itself, recent decisions say it expired, and the gate
// answers approval_expired for that call.
import { expect, test } from "@playwright/test";
import { signIn } from "../support/session";
import { USERS } from "../support/env";
import { uid } from "../support/api";
import { closeDb, one } from "../support/db";
import { ask, disablePolicy, enablePolicy, runTree } from "../support/policy";

const TOOL = "e2e.expire.send_invoice";

test.beforeAll(async () => {
  await enablePolicy(
    { rules: [{ name: "e2e-expire", tool: "e2e.expire.*", effect: "require_approval", approval: { ttlSeconds: 10 } }] },
    "e2e: expire journey",
  );
});
test.afterAll(async () => {
  await disablePolicy("e2e: expire journey done");
  await closeDb();
});

test("an unanswered card counts down and leaves; the gate answers approval_expired", async ({ page }) => {
  // Signed in first: the card lives ten seconds.
  await signIn(page, USERS.operator);
  const { child } = await runTree("expire journey");
  const operationId = uid("op");
  const held = await ask(child, operationId, TOOL);
  expect(held).toMatchObject({ decision: "hold", reason: "awaiting_approval" });
  await page.goto("/approvals");
  const card = page.locator(`[data-approval="${held.approvalId}"]`);
  await expect(card.locator("[data-countdown]")).toHaveText(/^0:0\d$/);
  await expect(card.getByRole("button", { name: "Approve" })).toBeVisible();
  await expect(card).toHaveCount(0, { timeout: 20_000 });
  const row = page.locator(`[data-decided="${held.approvalId}"]`);
  await expect(row).toContainText("Expired: nobody answered before the deadline");

  expect(await ask(child, operationId, TOOL)).toMatchObject({ decision: "deny", reason: "approval_expired" });
  // The engine's sweep (or the gate's own answer) writes it down.
  await expect
    .poll(async () => (await one<{ state: string }>("SELECT state FROM approvals WHERE id = $1", [held.approvalId])).state)
    .toBe("expired");
});
