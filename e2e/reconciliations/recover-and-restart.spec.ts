// Recovery, end to end in the browser: a kill finds a deployment the provider committed during the cancel;
// its recovery item waits on the open-work page with its owner; "Start recovery" asks the simulated provider
// to release it and counts it rolled back only once the provider's check says the effect is gone; the
// receipt's next version says so; then the killed root restarts on settled ground as a new run.
import { expect, test } from "@playwright/test";
import { signIn } from "../support/session";
import { USERS } from "../support/env";
import { liveRun } from "../support/live-run";
import { killViaApi, receiptVersion } from "../support/kill";
import { one, closeDb } from "../support/db";
import { expectNoAxeViolations } from "../support/axe";

test.afterAll(closeDb);

test("kill → effect found → start recovery → verified by the provider → restart", async ({ page }) => {
  const { run, operationId } = await liveRun("Reserve preview", "commit_during_cancel");
  const barrierId = await killViaApi(run.runId, "wrong commit detected");
  const v1 = await receiptVersion(barrierId, 1);
  expect(v1.decision).toBe("stopped_and_quiet");
  const item = await one<{ id: string; state: string }>(
    `SELECT ri.id, ri.state::text FROM recovery_items ri JOIN operations o ON o.id = ri.operation_id WHERE ri.barrier_id = $1 AND o.operation_id = $2`,
    [barrierId, operationId],
  );
  expect(item.state).toBe("open");

  // The operator who asked for the stop owns it: the open-work page lists it with the provider's rollback owner.
  await signIn(page, USERS.operator);
  await page.goto("/reconciliations");
  const row = page.locator(`tr[data-recovery-id="${item.id}"]`);
  await expect(row).toContainText("deploy.apply");
  await expect(row).toContainText("open");
  await expectNoAxeViolations(page);
  await row.getByRole("button", { name: "Start recovery" }).click();
  await expect(page.getByRole("status").filter({ hasText: "rolled back" })).toContainText("reports the effect absent");
  const done = await one<{ state: string; settled_by: string; verified_effect: string }>(
    "SELECT state::text, settled_by, verified_effect FROM recovery_items WHERE id = $1",
    [item.id],
  );
  expect(done).toEqual({ state: "rolled_back", settled_by: "provider", verified_effect: "absent" });
  await expect(page.locator(`tr[data-recovery-id="${item.id}"]`)).toHaveCount(0);

  // The receipt's newest version tells a reviewer what was undone and who proved it.
  await page.goto(`/receipts/${barrierId}`);
  await expect(page.locator("main")).toContainText("1 rolled back (verified by deploy-sim");

  // Settled ground: the killed root restarts as a new run for the same task.
  await page.goto(`/runs/${run.runId}`);
  await page.getByRole("button", { name: "Restart…" }).click();
  const dialog = page.getByRole("dialog", { name: "Restart this task" });
  await dialog.getByLabel(/Reason/).fill("retry on the right commit");
  await dialog.getByRole("button", { name: "Restart as a new run" }).click();
  await page.waitForURL((u) => /\/runs\/run_/.test(u.pathname) && !u.pathname.endsWith(run.runId));
  const fresh = await one<{ id: string; task_id: string; restarted_from_digest: string }>(
    "SELECT id, task_id, restarted_from_digest FROM runs WHERE restarted_from_run_id = $1",
    [run.runId],
  );
  expect(page.url()).toContain(fresh.id);
  const old = await one<{ task_id: string }>("SELECT task_id FROM runs WHERE id = $1", [run.runId]);
  expect(fresh.task_id).toBe(old.task_id);
  const latest = await one<{ digest: string }>("SELECT digest FROM stop_receipts WHERE barrier_id = $1 ORDER BY version DESC LIMIT 1", [
    barrierId,
  ]);
  expect(fresh.restarted_from_digest).toBe(latest.digest);
  // The two runs link each other.
  await expect(page.getByTestId("restart-links")).toContainText("Restarted from");
  await page.getByTestId("restart-links").getByRole("link").click();
  await page.waitForURL(new RegExp(`/runs/${run.runId}$`));
  await expect(page.getByTestId("restart-links")).toContainText("Restarted as");
});
