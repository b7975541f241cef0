// An unknown outcome, end to end: the provider's status endpoint is down during the kill, so the
// barrier cannot prove the deployment absent or present → unknown → reconciliation → receipt v1
// stop_incomplete naming its default owner (the operator who asked for the stop; never "unassigned").
// A manager hands it to the admin (v2: stop_incomplete, naming the assignee); the assignee records
// effect_absent with evidence (v3: stopped_and_quiet). Older versions stay readable.
import { expect, test } from "@playwright/test";
import { signIn } from "../support/session";
import { USERS } from "../support/env";
import { liveRun } from "../support/live-run";
import { killViaApi, receiptVersion } from "../support/kill";
import { one, closeDb } from "../support/db";
import { capture } from "../support/screenshots";

test.afterAll(closeDb);

test("a manager assigns an unknown outcome, the assignee resolves it, the receipt becomes stopped_and_quiet", async ({ page }) => {
  const { run, operationId } = await liveRun("Deploy payments API", "status_down");
  const barrierId = await killViaApi(run.runId, "payments error rate above SLO");
  const v1 = await receiptVersion(barrierId, 1);
  expect(v1.decision).toBe("stop_incomplete");
  const rec = await one<{ id: string; status: string }>(
    `SELECT r.id, r.status::text FROM reconciliations r JOIN settlements s ON s.id = r.settlement_id JOIN operations o ON o.id = s.operation_id
      WHERE s.barrier_id = $1 AND o.operation_id = $2`,
    [barrierId, operationId],
  );
  const owner = await one<{ id: string }>("SELECT id FROM users WHERE email = $1", [USERS.operator]);
  expect(rec.status).toBe("assigned");
  expect((await one<{ a: string }>("SELECT assignee_user_id AS a FROM reconciliations WHERE id = $1", [rec.id])).a).toBe(owner.id);
  expect(v1.canonical).toContain(USERS.operator);
  const assignee = await one<{ id: string }>("SELECT id FROM users WHERE email = $1", [USERS.admin]);

  // The manager sees it, with its age, and hands it to the operator. The run page shows the killed
  // tree, the stop ladder and the uncertain interval of the deployment nobody could check.
  await signIn(page, USERS.manager);
  await page.goto(`/runs/${run.runId}`);
  await expect(page.locator(".run-head:visible").getByTitle("lifecycle: killed")).toBeVisible();
  await expect(page.getByRole("list", { name: "Uncertain intervals" })).toContainText("provider status unavailable");
  await capture(page, "run-killed-uncertain", { fullPage: true });
  await page
    .getByRole("navigation", { name: "Main" })
    .getByRole("link", { name: /Open work/ })
    .click();
  await page.waitForURL(/\/reconciliations/);
  const row = page.locator(`tr[data-reconciliation="${rec.id}"]`);
  await expect(row).toContainText("deploy.apply");
  await expect(row).toContainText("Assigned");
  await expect(row).toContainText(USERS.operator); // the default owner: who asked for the stop
  await expect(row.locator("time").first()).toHaveAttribute("datetime", /\d{4}-\d\d-\d\dT/);
  await row.getByLabel("Assign to").selectOption(assignee.id);
  await row.getByRole("button", { name: /^(Re)?assign$/ }).click();
  await expect(row).toContainText("Assigned");
  await expect(row).toContainText(USERS.admin);
  await capture(page, "reconciliations");
  // The row already said "Assigned" (to its default owner): wait for the new assignee in the rows.
  await expect
    .poll(async () => (await one<{ a: string }>("SELECT assignee_user_id AS a FROM reconciliations WHERE id = $1", [rec.id])).a, {
      timeout: 20_000,
    })
    .toBe(assignee.id);
  const assigned = await one<{ status: string; assignee_user_id: string; assigned_by: string }>(
    "SELECT status::text, assignee_user_id, assigned_by FROM reconciliations WHERE id = $1",
    [rec.id],
  );
  expect(assigned).toMatchObject({ status: "assigned", assignee_user_id: assignee.id });
  expect(assigned.assigned_by).toMatch(/^user:/);

  // The receipt is re-issued, still stop_incomplete, now naming who holds the reconciliation.
  const v2 = await receiptVersion(barrierId, 2);
  expect(v2.decision).toBe("stop_incomplete");
  expect(v2.canonical).toContain(USERS.admin);
  await page.goto(`/receipts/${barrierId}`);
  await expect(page.getByRole("heading", { level: 1 })).toContainText("Not yet quiet");
  await expect(page.getByRole("region", { name: "Reconciliation" })).toContainText(USERS.admin);
  await expect(page.getByText("Digest verified")).toBeVisible();

  // The assignee records what the deployment system shows.
  await page.getByRole("button", { name: "Sign out" }).click();
  await page.waitForURL(/\/signin/);
  await signIn(page, USERS.admin);
  await page.goto("/reconciliations?owner=me");
  const mine = page.locator(`tr[data-reconciliation="${rec.id}"]`);
  await mine.getByRole("button", { name: "Record outcome…" }).click();
  const dialog = page.getByRole("dialog", { name: "Record the outcome" });
  await dialog.getByLabel(/Effect absent/).check();
  await dialog.getByLabel(/Evidence/).fill("deploy console shows release r-481 never rolled out; prod still on r-480");
  await dialog.getByRole("button", { name: "Record and re-issue receipt" }).click();
  await expect(dialog).toBeHidden();
  await expect(page.locator(`tr[data-reconciliation="${rec.id}"]`)).toHaveCount(0); // left the open queue

  const resolved = await one<{ status: string; resolution: string; evidence: string; resolved_by: string }>(
    "SELECT status::text, resolution::text, evidence, resolved_by FROM reconciliations WHERE id = $1",
    [rec.id],
  );
  expect(resolved).toMatchObject({
    status: "resolved",
    resolution: "effect_absent",
    evidence: "deploy console shows release r-481 never rolled out; prod still on r-480",
  });
  expect(resolved.resolved_by).toContain(assignee.id);
  const v3 = await receiptVersion(barrierId, 3);
  expect(v3.decision).toBe("stopped_and_quiet");

  await page.goto(`/receipts/${barrierId}`);
  await expect(page.getByRole("heading", { level: 1 })).toContainText("Stopped and quiet");
  await expect(page.getByText("version 3 of 3")).toBeVisible();
  await expect(page.getByLabel("sha256 digest")).toHaveText(`sha256:${v3.digest}`);
  const versions = page.getByRole("region", { name: "Versions" });
  await versions.getByRole("link", { name: "version 1" }).click();
  await page.waitForURL(/version=1/);
  await expect(page.getByRole("heading", { level: 1 })).toContainText("Not yet quiet");
  await expect(page.getByText("This is an older version.")).toBeVisible();
  await expect(page.getByLabel("sha256 digest")).toHaveText(`sha256:${v1.digest}`);
});
