// Run activity (docs/console.md#run-activity): a working run (a call in flight, never a heartbeat), an idle
// run (heard from minutes ago, nothing in flight) and a stale run (an hour-old heartbeat) read as such in
// the runs list, its Activity filter and the run page — "last heard from" is never "never" for a run with
// calls in flight — and "Stop everything" says how many of the runs it covers are working now.
import { expect, test } from "@playwright/test";
import { signIn } from "../support/session";
import { e2e, USERS } from "../support/env";
import { uid } from "../support/api";
import { db, one, closeDb } from "../support/db";

test.afterAll(closeDb);

test("working, idle and stale runs read as such, filter apart, and Stop everything counts the working", async ({ page }) => {
  const agent = e2e.agent();
  const task = uid("activity");
  const working = await agent.createRun({ taskId: `${task}-w`, title: "activity working" });
  const idle = await agent.createRun({ taskId: `${task}-i`, title: "activity idle" });
  const stale = await agent.createRun({ taskId: `${task}-s`, title: "activity stale" });
  // The working run asks the gate once: its call is in flight (never a heartbeat, as a tool call between two hooks).
  expect((await agent.gate(working, uid("op"), "deploy.apply")).decision).toBe("allow");
  // Move the other two back in time, as the gate and registration would have written them: idle was registered
  // ten minutes ago and heartbeated five minutes ago; stale was registered three hours ago and heard from an hour ago.
  const c = await db();
  await c.query(
    `UPDATE runs SET created_at = now() - interval '10 minutes', last_heartbeat_at = now() - interval '5 minutes' WHERE id = $1`,
    [idle.runId],
  );
  await c.query(`UPDATE leases SET valid_until = valid_until - interval '10 minutes' WHERE run_id = $1`, [idle.runId]);
  await c.query(`UPDATE runs SET created_at = now() - interval '3 hours', last_heartbeat_at = now() - interval '1 hour' WHERE id = $1`, [
    stale.runId,
  ]);
  await c.query(`UPDATE leases SET valid_until = valid_until - interval '3 hours' WHERE run_id = $1`, [stale.runId]);
  const running = await one<{ n: number }>(`SELECT count(*)::int AS n FROM operations WHERE run_id = $1 AND state = 'running'`, [
    working.runId,
  ]);
  expect(running.n).toBe(1);

  await signIn(page, USERS.operator);
  await page.goto(`/runs?q=${task}`);
  const row = (title: string) => page.getByRole("row").filter({ has: page.getByRole("link", { name: title, exact: true }) });
  await expect(row("activity working")).toContainText("activity working");
  await expect(row("activity working").locator(".badge", { hasText: "activity" })).toHaveText(/working/);
  await expect(row("activity idle").locator(".badge", { hasText: "activity" })).toHaveText(/idle/);
  await expect(row("activity stale").locator(".badge", { hasText: "activity" })).toHaveText(/stale/);
  // Last heard from: the working run's gate call, not "never".
  await expect(row("activity working")).not.toContainText("never");
  await expect(row("activity stale")).toContainText(/1h \d+m ago$/);

  // The Activity filter, from the toolbar and from a shared address.
  await page.getByRole("combobox", { name: /^Activity/ }).selectOption("working");
  await expect(page).toHaveURL(/activity=working/);
  await expect(page.getByRole("link", { name: "activity working", exact: true })).toBeVisible();
  await expect(page.getByRole("link", { name: "activity idle", exact: true })).toHaveCount(0);
  await expect(page.getByRole("link", { name: "activity stale", exact: true })).toHaveCount(0);
  for (const [activity, title] of [
    ["idle", "activity idle"],
    ["stale", "activity stale"],
  ] as const) {
    await page.goto(`/runs?q=${task}&activity=${activity}`);
    await expect(page.getByRole("link", { name: title, exact: true })).toBeVisible();
    await expect(page.getByTestId("runs-count")).toHaveText(/^1 run match/);
  }

  // The run page: the activity and a true "last heard from".
  await page.goto(`/runs/${working.runId}`);
  await expect(page.locator(".run-head .badge", { hasText: "activity" })).toHaveText(/working/);
  await expect(page.getByTestId("last-heard")).toContainText("last heard from");
  await expect(page.getByTestId("last-heard")).not.toContainText("never");
  await page.goto(`/runs/${stale.runId}`);
  await expect(page.locator(".run-head .badge", { hasText: "activity" })).toHaveText(/stale/);

  // Stop everything: how many of the covered runs are working now (at least the one with its call in flight).
  await page.goto("/runs");
  await page.getByRole("button", { name: "Stop everything…" }).click();
  const dialog = page.getByRole("dialog", { name: /Stop everything/ });
  await expect(dialog.getByTestId("fleet-dry-run")).toContainText(/covers \d+ runs? in \d+ trees?, \d+ working now/);
  const n = Number((await dialog.getByTestId("fleet-dry-run").textContent())!.match(/(\d+) working now/)![1]);
  expect(n).toBeGreaterThanOrEqual(1);
  await dialog.getByRole("button", { name: "Cancel" }).click();
});
