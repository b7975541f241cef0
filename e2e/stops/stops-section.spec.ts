// The Stops section (docs/fleet-stop.md#stops-in-the-console): a fleet pause and a single kill are listed
// newest first with who asked (name and e-mail, the id only as an attribute), why, what they cover in
// words, progress and the receipt; the stop page says the same in words (no JSON, no snake_case) and
// lifts the pause; a run killed by a fleet stop links to it. axe finds nothing on either page.
import { expect, test } from "@playwright/test";
import { signIn } from "../support/session";
import { e2e, USERS } from "../support/env";
import { uid } from "../support/api";
import { one, closeDb } from "../support/db";
import { expectNoAxeViolations } from "../support/axe";
import { capture } from "../support/screenshots";

test.afterAll(closeDb);

test("a fleet pause has a home: listed under Stops, said in words, lifted from its page", async ({ page }) => {
  const agent = e2e.agent();
  const task = uid("stops");
  for (let i = 0; i < 2; i++) await agent.createRun({ taskId: `${task}-${i}`, title: `stops member ${i}` });
  await signIn(page, USERS.operator);
  await page.goto(`/runs?q=${task}`);
  await expect(page.getByRole("link", { name: "stops member 0", exact: true })).toBeVisible();
  await page.getByRole("checkbox", { name: "Select every run on this page" }).check();
  await page.getByRole("button", { name: "Pause selected…" }).click();
  const dialog = page.getByRole("dialog", { name: /Pause 2 selected runs/ });
  await dialog.getByLabel(/Reason/).fill("e2e: hold the wave");
  await dialog.getByRole("button", { name: "Pause them" }).click();
  await page.waitForURL(/\/stops\/scope_/);
  const stopId = page.url().match(/\/stops\/(scope_[^?/#]+)/)![1]!;

  // The stop page: the filter in words, the person by name, no JSON and no snake_case.
  const main = page.getByRole("main");
  await expect(page.getByTestId("stop-filter")).toHaveText("2 runs named by id");
  await expect(main).toContainText("Oscar Operator");
  await expect(main).toContainText(USERS.operator);
  await expect(main).not.toContainText("user:");
  await expect(main).not.toContainText("{");
  // No snake_case word (ids such as scope_cNy… are not words: they are left out before looking).
  await expect
    .poll(
      async () =>
        ((await main.textContent()) ?? "").replace(/\b[a-z]+_[A-Za-z0-9_-]*[A-Z0-9-][A-Za-z0-9_-]*/g, "").match(/[a-z]+_[a-z]+/)?.[0] ??
        null,
    )
    .toBeNull();
  await expectNoAxeViolations(page);

  // Listed in the navigation's Stops section, newest first.
  await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Stops" }).click();
  await expect(page.getByRole("heading", { level: 1, name: "Stops" })).toBeVisible();
  const row = page.locator(`tr[data-stop-id="${stopId}"]`);
  await expect(row).toContainText("Fleet pause");
  await expect(row).toContainText("Oscar Operator");
  await expect(row).toContainText("e2e: hold the wave");
  await expect(row).toContainText("2 runs named by id");
  await expect(row).toContainText("holding every matching run");
  await expect(row.locator("[data-user-id]")).toHaveAttribute("data-user-id", /^user_/);
  await expect(page.locator("tbody tr").first()).toHaveAttribute("data-stop-id", stopId);
  await expectNoAxeViolations(page);
  await capture(page, "stops", { fullPage: true });

  // Lift it from its page: the dialog returns focus, the page says lifted, the gate decides afresh.
  await row.getByRole("link", { name: "Fleet pause" }).click();
  await page.getByRole("button", { name: "Lift this pause…" }).click();
  const lift = page.getByRole("dialog", { name: "Lift this fleet pause" });
  await lift.getByLabel(/Reason/).fill("e2e: wave is fine");
  await lift.getByRole("button", { name: "Lift the pause" }).click();
  await expect(page.getByTestId("stop-dispatch")).toContainText("lifted");
  const scope = await one<{ lifted: boolean }>("SELECT lifted_at IS NOT NULL AS lifted FROM stop_scopes WHERE id = $1", [stopId]);
  expect(scope.lifted).toBe(true);
});

test("a single kill is listed with its run, and a run killed by a fleet stop links to that stop", async ({ page }) => {
  const agent = e2e.agent();
  const task = uid("stopsk");
  const run = await agent.createRun({ taskId: `${task}-0`, title: "stops fleet-killed" });
  await signIn(page, USERS.operator);
  await page.goto(`/runs?q=${task}`);
  await page.getByRole("checkbox", { name: "Select every run on this page" }).check();
  await page.getByRole("button", { name: "Kill selected…" }).click();
  const dialog = page.getByRole("dialog", { name: /Kill 1 selected run/ });
  await dialog.getByLabel(/Reason/).fill("e2e: fleet-kill one");
  await dialog.getByRole("button", { name: "Kill them and start the barriers" }).click();
  await page.waitForURL(/\/stops\/scope_/);
  const stopId = page.url().match(/\/stops\/(scope_[^?/#]+)/)![1]!;
  await expect(page.getByTestId("fleet-receipt")).toContainText(/Stopped and quiet|Not yet quiet/, { timeout: 60_000 });

  await page.goto(`/runs/${run.runId}`);
  await page.getByRole("link", { name: "fleet stop" }).click();
  await page.waitForURL(new RegExp(`/stops/${stopId}`));

  await page.goto("/stops");
  const row = page.locator(`tr[data-stop-id="${stopId}"]`);
  await expect(row).toContainText("Fleet kill");
  await expect(row).toContainText(/1 target, barriers 1 started \/ 1 with a receipt/);
  await expect(row.getByRole("link", { name: /Stopped and quiet|Not yet quiet/ })).toHaveAttribute(
    "href",
    `/stops/${stopId}#fleet-receipt`,
  );
});
