// A resolved reconciliation still says why the outcome was unknown, who resolved it and what they
// found — in the queue, on the run page and on the receipt — and no longer shows a red "nobody yet".
// The receipt then prints without clipping its tables, and on screen each wide table is a scroll
// region a keyboard can reach and scroll.
import { expect, test } from "@playwright/test";
import { signIn } from "../support/session";
import { USERS } from "../support/env";
import { liveRun } from "../support/live-run";
import { killViaApi, receiptVersion } from "../support/kill";
import { one, db, closeDb } from "../support/db";

test.afterAll(closeDb);

test("a resolved reconciliation keeps its why, names who resolved it; the receipt prints unclipped and its scrollers take the keyboard", async ({
  page,
}) => {
  test.setTimeout(120_000);
  const { run, operationId } = await liveRun("Deploy search indexer", "status_down");
  const barrierId = await killViaApi(run.runId, "indexer writing to the wrong cluster");
  await receiptVersion(barrierId, 1);
  const rec = await one<{ id: string }>(
    `SELECT r.id FROM reconciliations r JOIN settlements s ON s.id = r.settlement_id
      JOIN operations o ON o.id = s.operation_id WHERE s.barrier_id = $1 AND o.operation_id = $2`,
    [barrierId, operationId],
  );
  // Nobody to hand it to (a team without an admin to name): it waits for an assignee.
  await (await db()).query("UPDATE reconciliations SET assignee_user_id = NULL, status = 'awaiting_assignee' WHERE id = $1", [rec.id]);

  await signIn(page, USERS.manager);
  // Why it is unknown, in the barrier's words: the queue says the same, before and after it is resolved.
  await page.goto(`/barriers/${barrierId}`);
  const why = (await page.locator("tr", { hasText: operationId }).locator("td.why").innerText()).trim();
  expect(why).not.toMatch(/_/);
  await page.goto("/reconciliations");
  const open = page.locator(`tr[data-reconciliation="${rec.id}"]`);
  await expect(open.locator("td.why")).toHaveText(why);
  await expect(open).toContainText("nobody yet");
  await open.getByRole("button", { name: "Record outcome…" }).click();
  const dialog = page.getByRole("dialog", { name: "Record the outcome" });
  await dialog.getByLabel(/Effect absent/).check();
  await dialog.getByLabel(/Evidence/).fill("indexer job list shows run 77 never started; cluster unchanged");
  await dialog.getByRole("button", { name: "Record and re-issue receipt" }).click();
  await expect(dialog).toBeHidden();

  // Resolved: the same why, the outcome and who, and no red "nobody yet".
  await page.getByRole("button", { name: "resolved", exact: true }).click();
  const done = page.locator(`tr[data-reconciliation="${rec.id}"]`);
  await expect(done.locator("td.why")).toHaveText(why);
  await expect(done.locator("[data-resolution]")).toContainText(`Effect absent · by ${USERS.manager}`);
  await expect(done).not.toContainText("nobody yet");
  await expect(done.locator(".text-danger")).toHaveCount(0);
  const row = await one<{ unknown_reason: string; settled: string }>(
    "SELECT r.unknown_reason, s.settled_reason AS settled FROM reconciliations r JOIN settlements s ON s.id = r.settlement_id WHERE r.id = $1",
    [rec.id],
  );
  expect(row.unknown_reason).toBe(why);
  expect(row.settled).toMatch(/^reconciled by /); // the settlement's own reason moved on; the why did not

  // The run page: the uncertain interval ended by the manager's reconciliation.
  await page.goto(`/runs/${run.runId}`);
  await expect(page.getByRole("list", { name: "Uncertain intervals" })).toContainText(`reconciled by ${USERS.manager}`);

  // The receipt: the reconciliation row keeps its cause and says who resolved it.
  await receiptVersion(barrierId, 2);
  await page.goto(`/receipts/${barrierId}`);
  await expect(page.getByRole("heading", { level: 1 })).toContainText("Stopped and quiet");
  const reconTable = page.getByRole("region", { name: "Outcomes to reconcile (table)" });
  await expect(reconTable).toContainText("provider_status_unavailable"); // the cause, kept
  await expect(reconTable).toContainText("resolved_by");
  await expect(reconTable).toContainText(USERS.manager);

  // On a narrow screen the wide tables scroll, and the keyboard reaches the scroller and scrolls it.
  await page.setViewportSize({ width: 640, height: 900 });
  const scrollers = page.locator(".receipt-body .table-wrap");
  expect(await scrollers.count()).toBeGreaterThan(0);
  for (const s of await scrollers.all()) {
    await expect(s).toHaveAttribute("tabindex", "0");
    await expect(s).toHaveAttribute("role", "region");
    await expect(s).toHaveAttribute("aria-label", /\(table\)$/);
  }
  const wide = reconTable;
  expect(await wide.evaluate((el) => el.scrollWidth > el.clientWidth)).toBe(true);
  let reached = false;
  for (let i = 0; i < 80 && !reached; i++) {
    await page.keyboard.press("Tab");
    reached = await wide.evaluate((el) => document.activeElement === el);
  }
  expect(reached).toBe(true);
  await page.keyboard.press("ArrowRight");
  await page.keyboard.press("ArrowRight");
  await expect.poll(() => wide.evaluate((el) => el.scrollLeft)).toBeGreaterThan(0);

  // Printed (A4 portrait is about 720 CSS px wide inside its margins): no table wider than its box,
  // nothing wider than the page.
  await page.setViewportSize({ width: 720, height: 1000 });
  await page.emulateMedia({ media: "print" });
  const overflow = await page.evaluate(() =>
    [...document.querySelectorAll<HTMLElement>(".table-wrap")].map((w) => ({
      label: w.getAttribute("aria-label"),
      table: w.querySelector("table")!.scrollWidth,
      box: w.clientWidth,
      scrolls: getComputedStyle(w).overflowX,
    })),
  );
  expect(overflow.length).toBeGreaterThan(0);
  for (const o of overflow) {
    expect(o.table, `${o.label} is clipped in print`).toBeLessThanOrEqual(o.box);
    expect(o.scrolls).toBe("visible");
  }
  expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(720);
  const pdf = await page.pdf({ format: "A4", printBackground: false });
  expect(pdf.subarray(0, 5).toString()).toBe("%PDF-");
});
