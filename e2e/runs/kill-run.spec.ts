// An operator kills a live run and reaches its receipt: the dialog requires a reason, the page follows
// the barrier live, and the receipt says stopped_and_quiet — on the page and in the database.
import { expect, test } from "@playwright/test";
import { signIn } from "../support/session";
import { USERS } from "../support/env";
import { liveRun } from "../support/live-run";
import { one, rows, closeDb } from "../support/db";
import { capture } from "../support/screenshots";

test.afterAll(closeDb);

test("an operator kills a live run and follows the barrier to a stopped_and_quiet receipt", async ({ page, context }) => {
  const { run, child, jobId } = await liveRun("Deploy checkout service");
  await signIn(page, USERS.operator);
  await capture(page, "runs-list");
  // A second tab on the runs list, never reloaded: it must show the kill by itself.
  const watcher = await context.newPage();
  await watcher.goto(`/runs?q=${run.runId}`);
  const watchedRow = watcher.getByRole("row").filter({ has: watcher.getByRole("link", { name: "Deploy checkout service", exact: true }) });
  await expect(watchedRow.getByTitle("lifecycle: normal")).toBeVisible();
  await expect(watcher.getByRole("status", { name: "Live updates from the control plane" })).toHaveText("Live");

  await page.goto(`/runs/${run.runId}`);
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Deploy checkout service");
  const header = page.locator(".run-head:visible");
  await expect(header.getByTitle("lifecycle: normal")).toBeVisible();
  await expect(header.getByTitle("breaker: closed")).toBeVisible();
  await expect(page.getByRole("region", { name: /Run tree/ })).toContainText("subagent");
  await capture(page, "run-detail", { fullPage: true });

  await page.getByRole("button", { name: "Kill…" }).click();
  const dialog = page.getByRole("dialog", { name: "Kill this run" });
  await expect(dialog).toBeVisible();
  const confirm = dialog.getByRole("button", { name: "Kill run and start the barrier" });
  await expect(confirm).toBeDisabled(); // no reason, no kill
  await capture(page, "kill-dialog");
  await dialog.getByLabel(/Reason/).fill("deploy went to the wrong region");
  await confirm.click();

  await expect(watchedRow.getByTitle("lifecycle: killed")).toBeVisible();
  await watcher.close();

  // The page follows the barrier live and moves on to the receipt once it is issued.
  await page.waitForURL(/\/barriers\/stop_/);
  const barrierId = page.url().match(/\/barriers\/(stop_[^?]+)/)![1]!;
  await expect(page.getByRole("list", { name: "Stop ladder" })).toBeVisible();
  await page.waitForURL(new RegExp(`/receipts/${barrierId}$`), { timeout: 60_000 });
  await expect(page.getByRole("heading", { level: 1 })).toContainText("Stopped and quiet");
  await expect(page.getByRole("heading", { name: "✓ Digest verified" })).toBeVisible();
  await capture(page, "receipt", { fullPage: true });

  // The database agrees: tree killed, epoch raised, leases revoked, queued work cancelled and kept,
  // the deployment settled with its provider, and a receipt whose digest is the one shown.
  const runs = await rows<{ lifecycle: string; epoch: number }>("SELECT lifecycle::text, epoch FROM runs WHERE root_run_id = $1", [
    run.runId,
  ]);
  expect(runs).toHaveLength(2);
  for (const r of runs) {
    expect(r.lifecycle).toBe("killed");
    expect(r.epoch).toBe(2);
  }
  const live = await one<{ n: string }>("SELECT count(*)::text AS n FROM leases WHERE run_id IN ($1, $2) AND revoked_at IS NULL", [
    run.runId,
    child.runId,
  ]);
  expect(live.n).toBe("0");
  const queued = await rows<{ state: string }>("SELECT state::text FROM operations WHERE run_id = $1 AND kind = 'queued'", [child.runId]);
  expect(queued.map((q) => q.state)).toEqual(["cancelled_not_started"]);
  const barrier = await one<{ run_id: string; reason: string; phase: string; decision: string; requested_by: string }>(
    "SELECT run_id, reason, phase::text, decision::text, requested_by FROM barriers WHERE id = $1",
    [barrierId],
  );
  expect(barrier).toMatchObject({
    run_id: run.runId,
    reason: "deploy went to the wrong region",
    phase: "complete",
    decision: "stopped_and_quiet",
  });
  expect(barrier.requested_by).toMatch(/^user:/);
  if (jobId) {
    const s = await one<{ settled_state: string }>(
      "SELECT s.settled_state::text FROM settlements s JOIN operations o ON o.id = s.operation_id WHERE s.barrier_id = $1 AND o.provider_job_id = $2",
      [barrierId, jobId],
    );
    expect(s.settled_state).toBe("cancelled_without_effect");
  }
  const receipt = await one<{ digest: string; decision: string }>(
    "SELECT digest, decision::text FROM stop_receipts WHERE barrier_id = $1 ORDER BY version DESC LIMIT 1",
    [barrierId],
  );
  expect(receipt.decision).toBe("stopped_and_quiet");
  await expect(page.getByLabel("sha256 digest")).toHaveText(`sha256:${receipt.digest}`);
  const audit = await one<{ n: string }>("SELECT count(*)::text AS n FROM audit_events WHERE target = $1 AND action = 'run.kill'", [
    run.runId,
  ]);
  expect(Number(audit.n)).toBeGreaterThanOrEqual(1);

  // Back on the barrier page: every settlement with why it settled.
  await page.goto(`/barriers/${barrierId}`);
  await expect(page.getByRole("heading", { level: 1 })).toContainText("Stopped and quiet");
  await capture(page, "barrier", { fullPage: true });
});
