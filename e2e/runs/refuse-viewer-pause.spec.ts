// A viewer cannot pause: the page offers no control, and posting the pause action (or the machine
// API) directly is refused — the run stays normal and no audit row is written.
import { expect, test } from "@playwright/test";
import { signIn } from "../support/session";
import { e2e, USERS } from "../support/env";
import { uid } from "../support/api";
import { one, db, closeDb } from "../support/db";
import { actionId, postAction } from "../support/server-action";
import { capture } from "../support/screenshots";

test.afterAll(closeDb);

test("a viewer sees no controls and the server refuses a hand-posted pause", async ({ page }) => {
  const run = await e2e.agent().createRun({ taskId: uid("task"), title: "Summarise incident timeline", harness: "codex" });
  await signIn(page, USERS.viewer);
  await page.goto(`/runs/${run.runId}`);
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Summarise incident timeline");
  await expect(page.locator(".run-head:visible").getByTitle("lifecycle: normal")).toBeVisible();
  for (const name of ["Pause", "Resume", "Kill…", "Trip breaker", "Reset breaker"]) {
    await expect(page.getByRole("button", { name, exact: true })).toHaveCount(0);
  }
  // Nor does the navigation offer what a viewer may not use.
  await expect(page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Audit log" })).toHaveCount(0);
  await expect(page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "API keys" })).toHaveCount(0);
  const audit = await page.goto("/audit");
  expect(audit?.status()).toBe(403);
  await expect(page.getByRole("alert").filter({ hasText: "403" })).toContainText("Viewers can't open the Audit log; ask an admin.");

  // Post the pause action by hand with the viewer's own session cookie.
  const pause = actionId("app/(console)/runs/[runId]/actions.ts", "pauseRunAction");
  const refused = await postAction(page.request, `/runs/${run.runId}`, pause, { runId: run.runId, reason: "viewer trying anyway" });
  expect(refused.text).toContain('"code":"forbidden"');
  expect(refused.text).toContain("may not run pause");
  const kill = actionId("app/(console)/runs/[runId]/actions.ts", "killRunAction");
  const refusedKill = await postAction(page.request, `/runs/${run.runId}`, kill, { runId: run.runId, reason: "viewer trying anyway" });
  expect(refusedKill.text).toContain('"code":"forbidden"');

  // The session cookie is no key for the machine API, and a machine key may not pause either.
  const viaCookie = await page.request.post(`/api/v1/runs/${run.runId}/pause`, { data: { reason: "x" } });
  expect(viaCookie.status()).toBe(401);
  const viaAgentKey = await fetch(`${e2e.baseUrl}/api/v1/runs/${run.runId}/pause`, {
    method: "POST",
    headers: { authorization: `Bearer ${e2e.keys().agent!.secret}`, "content-type": "application/json" },
    body: JSON.stringify({ reason: "x" }),
  });
  expect(viaAgentKey.status).toBe(403);

  // Nothing changed.
  const row = await one<{ lifecycle: string; epoch: number }>("SELECT lifecycle::text, epoch FROM runs WHERE id = $1", [run.runId]);
  expect(row).toEqual({ lifecycle: "normal", epoch: 1 });
  const writes = await one<{ n: string }>(
    "SELECT count(*)::text AS n FROM audit_events WHERE target = $1 AND action IN ('run.pause', 'run.kill')",
    [run.runId],
  );
  expect(writes.n).toBe("0");
  await page.goto(`/runs/${run.runId}`);
  await expect(page.locator(".run-head:visible").getByTitle("lifecycle: normal")).toBeVisible();
});

test("an operator's pause goes through the same action and is recorded", async ({ page }) => {
  const run = await e2e.agent().createRun({ taskId: uid("task"), title: "Rotate staging credentials", harness: "mcp" });
  await signIn(page, USERS.operator);
  await page.goto(`/runs/${run.runId}`);
  await page.getByRole("button", { name: "Pause", exact: true }).click();
  const dialog = page.getByRole("dialog", { name: "Pause this run" });
  await dialog.getByLabel(/Reason/).fill("waiting for change approval");
  await dialog.getByRole("button", { name: "Pause run" }).click();
  await expect(page.locator(".run-head:visible").getByTitle("lifecycle: paused")).toBeVisible();
  await expect(page.locator(".run-head:visible").getByTitle("breaker: closed")).toBeVisible();
  await expect(page.getByRole("button", { name: "Resume", exact: true })).toBeVisible();
  await expect(page.locator(".run-head:visible")).toContainText("if still paused");
  const row = await one<{ lifecycle: string; lifecycle_reason: string; breaker: string }>(
    "SELECT lifecycle::text, lifecycle_reason, breaker::text FROM runs WHERE id = $1",
    [run.runId],
  );
  expect(row).toEqual({ lifecycle: "paused", lifecycle_reason: "waiting for change approval", breaker: "closed" });
  const audit = await one<{ n: string }>("SELECT count(*)::text AS n FROM audit_events WHERE target = $1 AND action = 'run.pause'", [
    run.runId,
  ]);
  expect(audit.n).toBe("1");
  await capture(page, "run-paused");
  // The gate now holds the run's next call.
  const held = await e2e.agent().gate(run, uid("op"), "Bash");
  expect(held).toMatchObject({ decision: "hold", reason: "paused" });
});

test("a changed role or a removed membership takes effect on the next click, not at token expiry", async ({ page }) => {
  const run = await e2e.agent().createRun({ taskId: uid("task"), title: "Backfill search index", harness: "custom" });
  const member = await one<{ id: string; role: string }>(
    "SELECT m.id, m.role::text FROM memberships m JOIN users u ON u.id = m.user_id JOIN teams t ON t.id = m.team_id WHERE u.email = $1 AND t.slug = 'demo'",
    [USERS.operator],
  );
  const d = await db();
  await signIn(page, USERS.operator);
  await page.goto(`/runs/${run.runId}`);
  await expect(page.getByRole("button", { name: "Kill…" })).toBeVisible();
  try {
    await d.query("UPDATE memberships SET role = 'viewer' WHERE id = $1", [member.id]);
    await page.reload();
    await expect(page.getByRole("banner")).toContainText("viewer");
    await expect(page.getByRole("button", { name: "Kill…" })).toHaveCount(0);
    const kill = actionId("app/(console)/runs/[runId]/actions.ts", "killRunAction");
    const refused = await postAction(page.request, `/runs/${run.runId}`, kill, { runId: run.runId, reason: "demoted but still signed in" });
    expect(refused.text).toContain('"code":"forbidden"');

    await d.query("UPDATE memberships SET team_id = (SELECT id FROM teams WHERE slug = 'other'), role = 'viewer' WHERE id = $1", [
      member.id,
    ]);
    await page.goto(`/runs/${run.runId}`);
    // Now a member of the other team only: the demo team's run is simply not there.
    expect((await page.request.get(`/api/console/runs/${run.runId}`)).status()).toBe(404);
  } finally {
    await d.query("UPDATE memberships SET team_id = (SELECT id FROM teams WHERE slug = 'demo'), role = $2::\"Role\" WHERE id = $1", [
      member.id,
      member.role,
    ]);
  }
  const row = await one<{ lifecycle: string }>("SELECT lifecycle::text FROM runs WHERE id = $1", [run.runId]);
  expect(row.lifecycle).toBe("normal");
});
