// Fleet stop from the console (docs/fleet-stop.md): select runs in the runs list, see the dry-run
// count, give a reason, and follow the fleet-stop page live to its fleet receipt; "Stop everything"
// wants the team's name typed back (a wrong name is refused, nothing written). And a Pause whose
// request fails shows the error, keeps the reason and offers a retry that then works.
import { expect, test } from "@playwright/test";
import { signIn } from "../support/session";
import { e2e, USERS } from "../support/env";
import { uid } from "../support/api";
import { one, closeDb } from "../support/db";
import { capture } from "../support/screenshots";

test.afterAll(closeDb);

test("an operator kills three selected runs as one fleet stop and follows it to the fleet receipt", async ({ page }) => {
  const agent = e2e.agent();
  const task = uid("fleet");
  const runs = [];
  for (let i = 0; i < 3; i++) runs.push(await agent.createRun({ taskId: `${task}-${i}`, title: `fleet member ${i}` }));
  const before = await one<{ n: string }>("SELECT count(*)::text AS n FROM stop_scopes");
  await signIn(page, USERS.operator);

  // "Stop everything": the team's name must be typed back; a wrong one is refused and nothing is written.
  await page.goto("/runs");
  await page.getByRole("button", { name: "Stop everything…" }).click();
  const all = page.getByRole("dialog", { name: /Stop everything/ });
  await expect(all.getByTestId("fleet-dry-run")).toContainText(/covers \d+ runs? in \d+ trees?/);
  await all.getByLabel(/Reason/).fill("e2e: must not happen");
  await all.getByLabel(/Type the team/).fill("not the team");
  await all.getByRole("button", { name: /Kill them/ }).click();
  await expect(all.getByRole("alert")).toContainText("type the team's name");
  await all.getByRole("button", { name: "Cancel" }).click();
  expect((await one<{ n: string }>("SELECT count(*)::text AS n FROM stop_scopes")).n).toBe(before.n);

  // Select the three runs (search narrows the list to them), dry-run count in the dialog, then kill.
  await page.goto(`/runs?q=${task}`);
  await expect(page.getByRole("link", { name: "fleet member 0", exact: true })).toBeVisible();
  await page.getByRole("checkbox", { name: "Select every run on this page" }).check();
  await expect(page.getByRole("region", { name: "Selection" })).toContainText("3 runs selected for a fleet stop.");
  await page.getByRole("button", { name: "Kill selected…" }).click();
  const dialog = page.getByRole("dialog", { name: "Kill 3 selected runs" });
  await expect(dialog.getByTestId("fleet-dry-run")).toContainText("covers 3 runs in 3 trees");
  await capture(page, "fleet-stop-dialog");
  await dialog.getByLabel(/Reason/).fill("e2e: bad deploy wave");
  await dialog.getByRole("button", { name: "Kill them and start the barriers" }).click();

  await page.waitForURL(/\/stops\/scope_/);
  const stopId = page.url().match(/\/stops\/(scope_[^?/]+)/)![1]!;
  await expect(page.getByTestId("stop-matched")).toHaveText("3");
  await expect(page.getByTestId("stop-dispatch")).toContainText("denied");
  await expect(page.getByTestId("fleet-receipt")).toContainText("Stopped and quiet", { timeout: 60_000 });
  await expect(page.getByTestId("stop-complete")).toContainText("3 of 3");
  await capture(page, "fleet-stop", { fullPage: true });

  const scope = await one<{ decision: string; receipt_digest: string; matched: number; requested_by: string }>(
    "SELECT decision::text, receipt_digest, matched, requested_by FROM stop_scopes WHERE id = $1",
    [stopId],
  );
  expect(scope).toMatchObject({ decision: "stopped_and_quiet", matched: 3 });
  expect(scope.requested_by).toMatch(/^user:/);
  await expect(page.getByTestId("fleet-receipt")).toContainText(scope.receipt_digest);
  const killed = await one<{ n: string }>("SELECT count(*)::text AS n FROM runs WHERE id = ANY ($1) AND lifecycle = 'killed'", [
    runs.map((r) => r.runId),
  ]);
  expect(killed.n).toBe("3");
});

test("select all N matching for a search: the stop names exactly the matching runs, and a run created later is not covered", async ({
  page,
}) => {
  test.setTimeout(120_000);
  const agent = e2e.agent();
  const task = uid("listed");
  // More than one page (50) match the search, so "select all N matching" reaches past the page.
  const runs = [];
  for (let i = 0; i < 52; i++) runs.push(await agent.createRun({ taskId: `${task}-${i}`, title: `listed member ${i}` }));
  await signIn(page, USERS.operator);
  await page.goto(`/runs?q=${task}`);
  await expect(page.getByTestId("runs-count")).toHaveText("52 runs match");
  await page.getByRole("checkbox", { name: "Select every run on this page" }).check();
  const bar = page.getByRole("region", { name: "Selection" });
  await expect(bar).toContainText("50 runs selected for a fleet stop.");
  // A search has no stop-scope form: the button says the stop will name the runs one by one.
  await bar.getByRole("button", { name: "Select all 52 matching (by run id)" }).click();
  await expect(bar).toContainText("The 52 runs matching these filters now selected");
  await expect(bar.getByTestId("listed-note")).toContainText("runs created later are not covered");
  await bar.getByRole("button", { name: "Pause selected…" }).click();
  const dialog = page.getByRole("dialog", { name: "Pause the 52 runs matching these filters now" });
  await expect(dialog.getByTestId("fleet-dry-run")).toContainText("covers 52 runs, 0 working now");
  await expect(dialog.getByTestId("fleet-dry-run")).toContainText("no other run created later is covered");
  await dialog.getByLabel(/Reason/).fill("e2e: pause the search results");
  await dialog.getByRole("button", { name: "Pause them" }).click();
  await page.waitForURL(/\/stops\/scope_/);
  const stopId = page.url().match(/\/stops\/(scope_[^?/]+)/)![1]!;
  await expect(page.getByTestId("stop-matched")).toHaveText("52");

  // The scope is the 52 ids, nothing broader.
  const scope = await one<{ ids: string[]; f_task_prefix: string | null }>(
    "SELECT f_run_ids AS ids, f_task_prefix FROM stop_scopes WHERE id = $1",
    [stopId],
  );
  expect([...scope.ids].sort()).toEqual(runs.map((r) => r.runId).sort());
  expect(scope.f_task_prefix).toBeNull();
  // A listed run is held; a run created afterwards that matches the same search is not covered.
  expect((await agent.gate(runs[0]!, uid("op"), "Bash")).decision).toBe("hold");
  const late = await agent.createRun({ taskId: `${task}-late`, title: "listed latecomer" });
  expect((await agent.gate(late, uid("op"), "Bash")).decision).toBe("allow");
});

test("a Pause whose request fails shows the error, keeps the reason, and the retry works", async ({ page }) => {
  const run = await e2e.agent().createRun({ taskId: uid("flaky"), title: "flaky network run" });
  await signIn(page, USERS.operator);
  await page.goto(`/runs/${run.runId}`);
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("flaky network run");
  // Every server action POST fails at the network level.
  await page.route(`**/runs/${run.runId}`, (route) => (route.request().method() === "POST" ? route.abort("failed") : route.continue()));
  await page.getByRole("button", { name: "Pause" }).click();
  const dialog = page.getByRole("dialog", { name: "Pause this run" });
  await dialog.getByLabel(/Reason/).fill("looks stuck");
  await dialog.getByRole("button", { name: "Pause run" }).click();
  await expect(dialog.getByRole("alert")).toContainText("Not done");
  await expect(dialog.getByRole("button", { name: "Cancel" })).toBeEnabled();
  await expect(dialog.getByLabel(/Reason/)).toHaveValue("looks stuck");
  const retry = dialog.getByRole("button", { name: "Retry: Pause run" });
  await expect(retry).toBeEnabled();
  expect((await one<{ lifecycle: string }>("SELECT lifecycle::text FROM runs WHERE id = $1", [run.runId])).lifecycle).toBe("normal");
  await capture(page, "failed-action");

  await page.unroute(`**/runs/${run.runId}`);
  await retry.click();
  await expect(dialog).toBeHidden();
  await expect(page.locator(".run-head:visible").getByTitle("lifecycle: paused")).toBeVisible();
});
