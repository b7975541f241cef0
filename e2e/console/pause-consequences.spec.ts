// A pause says what becomes of it (docs/console.md): the single pause dialog names the team's reclaim and
// when it turns the pause into a kill, the paused run counts down to it, and the fleet pause dialog says a
// fleet pause lasts until someone lifts it — the reclaim never turns it into a kill (the engine reclaims runs
// paused on their own; a fleet pause holds runs through its scope), checked against the database after.
import { expect, test } from "@playwright/test";
import { e2e, USERS } from "../support/env";
import { uid } from "../support/api";
import { signIn } from "../support/session";
import { closeDb, one } from "../support/db";

test.afterAll(closeDb);

test("the pause dialogs say when a pause becomes a kill, and that a fleet pause never does", async ({ page }) => {
  const team = await one<{ seconds: number | null }>("SELECT pause_policy_seconds AS seconds FROM teams WHERE slug = 'demo'");
  expect(team.seconds, "the demo team reclaims paused runs").not.toBeNull();
  const minutes = `${team.seconds! / 60} minutes`;
  const agent = e2e.agent();
  const task = uid("pause-says");
  const runs = [];
  for (let i = 0; i < 2; i++) runs.push(await agent.createRun({ taskId: `${task}-${i}`, title: `pause says ${i}` }));
  await signIn(page, USERS.operator);

  // One run: the dialog says it before the pause, the run page counts down after it.
  await page.goto(`/runs/${runs[0]!.runId}`);
  await page.getByRole("button", { name: "Pause", exact: true }).click();
  const single = page.getByRole("dialog", { name: "Pause this run" });
  await expect(single.getByTestId("pause-reclaim")).toHaveText(`If it is still paused after ${minutes}, the team’s reclaim kills it.`);
  await single.getByRole("button", { name: "Cancel" }).click();

  // The fleet pause of both runs: it lasts until lifted, and says so.
  await page.goto(`/runs?q=${task}`);
  await expect(page.getByRole("link", { name: "pause says 0", exact: true })).toBeVisible();
  await page.getByRole("checkbox", { name: "Select every run on this page" }).check();
  await page.getByRole("button", { name: "Pause selected…" }).click();
  const fleet = page.getByRole("dialog", { name: /Pause 2 selected runs/ });
  await expect(fleet.getByTestId("fleet-pause-lasts")).toHaveText(
    `A fleet pause lasts until someone lifts it on its page under Stops: the team's reclaim (a run paused on its own for ${minutes} is killed) never turns it into a kill.`,
  );
  await fleet.getByLabel(/Reason/).fill("e2e: a fleet pause is not reclaimed");
  await fleet.getByRole("button", { name: "Pause them" }).click();
  await page.waitForURL(/\/stops\/scope_/);
  // What the dialog said is what the engine does: the scope holds the runs, their own lifecycle stays normal,
  // and the reclaim picks only runs whose lifecycle is paused.
  const after = await one<{ normal: string }>(
    "SELECT count(*) FILTER (WHERE lifecycle = 'normal')::text AS normal FROM runs WHERE id = ANY ($1::text[])",
    [runs.map((r) => r.runId)],
  );
  expect(after.normal).toBe("2");
  await page.getByRole("button", { name: "Lift this pause…" }).click();
  const lift = page.getByRole("dialog", { name: "Lift this fleet pause" });
  await lift.getByLabel(/Reason/).fill("e2e: done");
  await lift.getByRole("button", { name: "Lift the pause" }).click();
  await expect(page.getByTestId("stop-dispatch")).toContainText("lifted");
});
