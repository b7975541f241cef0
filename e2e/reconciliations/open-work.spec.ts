// Open work, the managers' view: unknown outcomes and recovery items on one page with the team's counts in
// the header (the navigation's badge says the same total), filtered by owner and by age through the URL
// (a reload or a shared link shows the same), overdue items marked; keyboard only, at 390 px, axe clean.
import { randomBytes } from "node:crypto";
import { expect, test } from "@playwright/test";
import { signIn } from "../support/session";
import { USERS } from "../support/env";
import { closeDb, db, one } from "../support/db";
import { expectNoAxeViolations } from "../support/axe";
import { countsAgree, demoTeam, newMember, runningOp, shownCounts } from "../support/open-work";

test.afterAll(closeDb);

const HOUR = 3_600_000;

/** An unknown outcome (the trigger opens its reconciliation) held by `owner`, opened `age` ms ago. */
async function unknown(owner: string, age: number): Promise<string> {
  const op = await runningOp();
  const d = await db();
  await d.query("UPDATE operations SET state = 'aborted_unknown' WHERE id = $1", [op.rowId]);
  const r = await one<{ id: string }>("SELECT id FROM reconciliations WHERE operation_id = $1", [op.rowId]);
  await d.query(
    "UPDATE reconciliations SET assignee_user_id = $2, status = 'assigned', created_at = now() - make_interval(secs => $3) WHERE id = $1",
    [r.id, owner, age / 1000],
  );
  return r.id;
}

/** A recovery item (a barrier found the effect completed; the trigger opens it) held by `owner`, opened `age` ms ago, due in `dueIn` ms. */
async function recovery(owner: string, age: number, dueIn: number): Promise<string> {
  const op = await runningOp();
  const d = await db();
  await d.query("UPDATE operations SET state = 'succeeded' WHERE id = $1", [op.rowId]);
  const barrierId = `stop_openwork${randomBytes(6).toString("hex")}`;
  await d.query(
    `INSERT INTO barriers (id, team_id, run_id, requested_by, reason, new_epoch, policy, phase) VALUES ($1, $2, $3, 'system:open-work-fixture', 'open work', 2, '{}', 'complete')`,
    [barrierId, await demoTeam(), op.runId],
  );
  await d.query(
    `INSERT INTO settlements (id, barrier_id, operation_id, state_at_barrier, settled_state, settled_at) VALUES ($1, $2, $3, 'running', 'completed_and_verified', now())`,
    [`set_openwork${randomBytes(6).toString("hex")}`, barrierId, op.rowId],
  );
  const r = await one<{ id: string }>("SELECT id FROM recovery_items WHERE operation_id = $1", [op.rowId]);
  await d.query(
    `UPDATE recovery_items SET assignee_user_id = $2, created_at = now() - make_interval(secs => $3),
            due_at = now() + make_interval(secs => $4), overdue_notified_at = now() WHERE id = $1`,
    [r.id, owner, age / 1000, dueIn / 1000],
  );
  return r.id;
}

test("open work: counts in the header and the badge, owner and age filters in the URL, overdue marked", async ({ page }) => {
  const owner = await newMember("operator");
  const fresh = await unknown(owner.id, 5 * 60_000);
  const twoHours = await unknown(owner.id, 2 * HOUR);
  const recFresh = await recovery(owner.id, 10 * 60_000, 24 * HOUR);
  const recOverdue = await recovery(owner.id, 30 * HOUR, -HOUR);
  const elsewhere = await recovery((await one<{ id: string }>("SELECT id FROM users WHERE email = $1", [USERS.operator])).id, 0, HOUR);

  await signIn(page, USERS.manager);
  await page.goto("/reconciliations");
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Open work");

  // The header's counts are the team's (whatever the filters), and the navigation's badge is their total.
  await expect.poll(() => countsAgree(page)).toBe("agree");
  expect((await shownCounts(page)).overdue).toBeGreaterThanOrEqual(1);
  await expectNoAxeViolations(page);

  // Owner, by keyboard: the select is labelled and reachable; the choice lands in the URL.
  const ownerSelect = page.getByLabel("Owner");
  await ownerSelect.focus();
  await ownerSelect.selectOption(owner.id);
  await page.waitForURL((u) => u.searchParams.get("owner") === owner.id);
  const unknownRow = (id: string) => page.locator(`tr[data-reconciliation="${id}"]`);
  const recoveryRow = (id: string) => page.locator(`tr[data-recovery-id="${id}"]`);
  await expect(unknownRow(fresh)).toBeVisible();
  await expect(unknownRow(twoHours)).toBeVisible();
  await expect(recoveryRow(recFresh)).toBeVisible();
  await expect(recoveryRow(recOverdue)).toBeVisible();
  await expect(recoveryRow(elsewhere)).toHaveCount(0);
  await expect(page.locator("tr[data-reconciliation]")).toHaveCount(2);
  await expect(page.locator("tr[data-recovery-id]")).toHaveCount(2);

  // The overdue item is marked, the other is not.
  await expect(recoveryRow(recOverdue)).toHaveAttribute("data-overdue", "");
  await expect(recoveryRow(recOverdue)).toContainText("overdue");
  await expect(recoveryRow(recFresh)).not.toHaveAttribute("data-overdue");

  // Age "over 1 h", with the keyboard: Tab to the button, Enter.
  const ages = page.getByRole("group", { name: "Age" });
  await ages.getByRole("button", { name: "over 1 h" }).focus();
  await page.keyboard.press("Enter");
  await page.waitForURL((u) => u.searchParams.get("age") === "1h" && u.searchParams.get("owner") === owner.id);
  await expect(ages.getByRole("button", { name: "over 1 h" })).toHaveAttribute("aria-pressed", "true");
  await expect(unknownRow(twoHours)).toBeVisible();
  await expect(unknownRow(fresh)).toHaveCount(0);
  await expect(recoveryRow(recOverdue)).toBeVisible();
  await expect(recoveryRow(recFresh)).toHaveCount(0);

  // "over 1 day", then "overdue": unknown outcomes have no due time, recovery items past due remain.
  await ages.getByRole("button", { name: "over 1 day" }).click();
  await page.waitForURL((u) => u.searchParams.get("age") === "1d");
  await expect(unknownRow(twoHours)).toHaveCount(0);
  await expect(recoveryRow(recOverdue)).toBeVisible();
  await ages.getByRole("button", { name: "overdue" }).click();
  await page.waitForURL((u) => u.searchParams.get("age") === "overdue");
  await expect(page.locator("tr[data-reconciliation]")).toHaveCount(0);
  await expect(page.getByText("Unknown outcomes have no due time")).toBeVisible();
  await expect(page.locator("tr[data-recovery-id]")).toHaveCount(1);
  await expect(recoveryRow(recOverdue)).toContainText("overdue");

  // The URL is the view: a reload (or a colleague opening the link) shows the same filters and rows.
  await page.reload();
  await expect(page.getByLabel("Owner")).toHaveValue(owner.id);
  await expect(page.getByRole("group", { name: "Age" }).getByRole("button", { name: "overdue" })).toHaveAttribute("aria-pressed", "true");
  await expect(page.locator("tr[data-recovery-id]")).toHaveCount(1);
  await expect(recoveryRow(recOverdue)).toBeVisible();

  // At 390 px the page does not scroll sideways (tables scroll inside their region), and axe stays clean.
  await page.setViewportSize({ width: 390, height: 844 });
  await page.goto(`/reconciliations?owner=${owner.id}`);
  await expect(recoveryRow(recOverdue)).toBeVisible();
  const widths = await page.evaluate(() => {
    const screen = document.documentElement.clientWidth;
    const wide = Array.from(document.querySelectorAll("main *"))
      .filter((el) => el.getBoundingClientRect().right > screen + 1 && !el.closest(".table-wrap"))
      .slice(0, 3)
      .map((el) => `${el.tagName.toLowerCase()}.${el.className}`);
    return { page: document.documentElement.scrollWidth, screen, wide };
  });
  expect(widths.page, `wider than the screen: ${widths.wide.join(" | ")}`).toBeLessThanOrEqual(widths.screen);
  await expectNoAxeViolations(page);
});
