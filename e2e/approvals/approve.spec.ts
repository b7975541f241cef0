// Approve (docs/approvals-console.md): an agent's call is held for approval; an operator finds the card through
// the navigation's count, reads the run tree, the redacted arguments, the rule and the countdown, approves with a
// note; the card leaves, recent decisions say who approved, and the gate then allows exactly that call. A viewer
// sees the card without buttons, and at 390 px the page is no wider than the screen.
import { expect, test } from "@playwright/test";
import { signIn } from "../support/session";
import { USERS } from "../support/env";
import { uid } from "../support/api";
import { closeDb, one } from "../support/db";
import { ask, disablePolicy, enablePolicy, runTree } from "../support/policy";
import { expectNoAxeViolations } from "../support/axe";

const TOOL = "e2e.approve.deploy";

test.beforeAll(async () => {
  await enablePolicy(
    {
      rules: [{ name: "e2e-approve", tool: "e2e.approve.*", effect: "require_approval", approval: { ttlSeconds: 600 } }],
      redactKeys: ["token"],
      note: "e2e: approve journey",
    },
    "e2e: approve journey",
  );
});
test.afterAll(async () => {
  await disablePolicy("e2e: approve journey done");
  await closeDb();
});

test("an operator approves a held call in the browser, and the gate then allows that call", async ({ page, browser }) => {
  const { root, child } = await runTree("approve journey");
  const operationId = uid("op");
  const args = { env: "preview", token: "s3cret-never-shown" };
  const held = await ask(child, operationId, TOOL, args);
  expect({ decision: held.decision, reason: held.reason }).toEqual({ decision: "hold", reason: "awaiting_approval" });
  const approvalId = held.approvalId!;

  await signIn(page, USERS.operator);
  const nav = page.getByRole("navigation", { name: "Main" });
  await expect(nav.getByRole("link", { name: /Approvals/ }).locator(".count")).toHaveText(/^[1-9]\d*$/);
  await nav.getByRole("link", { name: /Approvals/ }).click();
  await expect(page.getByRole("heading", { level: 1, name: "Approvals" })).toBeVisible();

  const card = page.locator(`[data-approval="${approvalId}"]`);
  await expect(card.getByRole("heading", { name: TOOL })).toBeVisible();
  const tree = card.getByRole("list", { name: "Run tree, root first" });
  await expect(tree.getByRole("link")).toHaveCount(2);
  await expect(tree.getByRole("link").first()).toHaveAttribute("href", `/runs/${root.runId}`);
  await expect(tree.getByRole("link").last()).toHaveAttribute("href", `/runs/${child.runId}`);
  await expect(tree.getByRole("link").last()).toHaveText("approve journey — subagent");
  await expect(card).toContainText("e2e-approve");
  const argsBox = card.getByLabel(`Arguments of ${TOOL}`);
  await expect(argsBox).toContainText('"env": "preview"');
  await expect(argsBox).toContainText("[redacted]");
  await expect(card).not.toContainText("s3cret-never-shown");
  // The countdown ticks: two readings a second and a bit apart differ.
  const clock = card.locator("[data-countdown]");
  await expect(clock).toHaveText(/^\d+:\d\d$/);
  const first = await clock.textContent();
  await expect.poll(() => clock.textContent(), { timeout: 5000 }).not.toBe(first);
  await expectNoAxeViolations(page);

  // A viewer reads the same card, with no way to answer it (the rule asks for an operator or above).
  const viewerContext = await browser.newContext();
  const viewer = await viewerContext.newPage();
  await signIn(viewer, USERS.viewer);
  await viewer.goto("/approvals");
  const viewerCard = viewer.locator(`[data-approval="${approvalId}"]`);
  await expect(viewerCard).toContainText("Only an operator, manager or admin may answer this one");
  await expect(viewerCard.getByRole("button")).toHaveCount(0);
  // At a phone's width the page does not scroll sideways.
  await viewer.setViewportSize({ width: 390, height: 844 });
  await expect(viewerCard).toBeVisible();
  expect(await viewer.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
  await viewerContext.close();

  await card.getByLabel(/Note/).fill("preview only, go ahead");
  await card.getByRole("button", { name: "Approve" }).click();
  await expect(page.getByRole("status").filter({ hasText: `Approved ${TOOL}` })).toBeVisible();
  await expect(card).toHaveCount(0);
  const row = page.locator(`[data-decided="${approvalId}"]`);
  await expect(row).toContainText("Approved by");
  await expect(row).toContainText("preview only, go ahead");

  const stored = await one<{ state: string; note: string; decided_by: string }>(
    "SELECT state, note, decided_by FROM approvals WHERE id = $1",
    [approvalId],
  );
  expect(stored).toMatchObject({ state: "approved", note: "preview only, go ahead" });
  expect(stored.decided_by).toMatch(/^user:/);

  // The gate now allows exactly that call; the same arguments under another operation id wait for their own yes.
  expect(await ask(child, operationId, TOOL, args)).toMatchObject({ decision: "allow", reason: "allowed" });
  const other = await ask(child, uid("op"), TOOL, args);
  expect(other).toMatchObject({ decision: "hold", reason: "awaiting_approval" });
  expect(other.approvalId).not.toBe(approvalId);
  await expect(row).toContainText("the call then ran");
  // Not left waiting for the journeys after this one.
  await one("UPDATE approvals SET expires_at = now() WHERE id = $1 RETURNING id", [other.approvalId]);
});

test("the navigation's approvals count moves while the page stays open", async ({ page, playwright, baseURL }) => {
  const signedOut = await playwright.request.newContext({ baseURL });
  expect((await signedOut.get("/api/console/counts")).status(), "the counts need a session").toBe(401);
  await signedOut.dispose();
  const { child } = await runTree("live count");
  await signIn(page, USERS.operator);
  await page.goto("/runs");
  const badge = page
    .getByRole("navigation", { name: "Main" })
    .getByRole("link", { name: /Approvals/ })
    .locator(".count");
  const before = (await badge.count()) === 0 ? 0 : Number(await badge.textContent());
  const held = await ask(child, uid("op"), TOOL, { env: "preview" });
  expect(held.reason).toBe("awaiting_approval");
  // No navigation: the header polls its counts (and refreshes them on every control event).
  await expect(badge).toHaveText(String(before + 1), { timeout: 15_000 });
  await expect(page).toHaveURL(/\/runs$/);
});
