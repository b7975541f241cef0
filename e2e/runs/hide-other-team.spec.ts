// Tenancy: an operator of team A gets 404 — the same answer as for a run that does not exist — for
// team B's run, on the page, on the console's JSON endpoint and through a hand-posted action.
import { expect, test } from "@playwright/test";
import { signIn } from "../support/session";
import { e2e, USERS } from "../support/env";
import { uid } from "../support/api";
import { one, closeDb } from "../support/db";
import { actionId, postAction } from "../support/server-action";

test.afterAll(closeDb);

test("an operator of team demo gets 404 for team other's run", async ({ page }) => {
  const theirs = await e2e.otherTeamAgent().createRun({ taskId: uid("task"), title: "Other team's payroll export" });
  const owner = await one<{ slug: string }>("SELECT t.slug FROM runs r JOIN teams t ON t.id = r.team_id WHERE r.id = $1", [theirs.runId]);
  expect(owner.slug).toBe("other"); // it exists — just not for this operator

  await signIn(page, USERS.operator);
  const res = await page.goto(`/runs/${theirs.runId}`);
  expect(res?.status()).toBe(404);
  await expect(page.getByText("404 — not found")).toBeVisible();
  await expect(page.getByText("Other team's payroll export")).toHaveCount(0);

  const missing = await page.goto("/runs/run_doesnotexist000000");
  expect(missing?.status()).toBe(404);

  const api = await page.request.get(`/api/console/runs/${theirs.runId}`);
  expect(api.status()).toBe(404);
  expect(await api.json()).toEqual({ error: { code: "not_found", message: "run not found" } });

  await page.goto(`/runs?q=${theirs.runId}`);
  await expect(page.getByText("No runs match these filters")).toBeVisible();

  const pause = actionId("app/(console)/runs/[runId]/actions.ts", "pauseRunAction");
  const refused = await postAction(page.request, `/runs/${theirs.runId}`, pause, { runId: theirs.runId, reason: "cross-team attempt" });
  expect(refused.text).toContain('"code":"not_found"');
  const row = await one<{ lifecycle: string }>("SELECT lifecycle::text FROM runs WHERE id = $1", [theirs.runId]);
  expect(row.lifecycle).toBe("normal");
});
