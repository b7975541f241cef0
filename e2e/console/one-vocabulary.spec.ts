// One vocabulary (docs/console.md#one-vocabulary): the barrier's phase, the receipt's decision and the
// ladder are said with the same words on the barrier, receipt, run, stops and open-work pages and in the
// fleet-stop dialog; no page shows snake_case outside code, or "complete" beside "incomplete". Each case
// is one of the contradictions the console used to show: a stopped-and-quiet stop whose ladder said
// "requested is not stopped", an unknown the queue called "no stop" while its barrier listed it, and
// "2 selected runs selected for a fleet stop".
import { expect, test, type Locator, type Page } from "@playwright/test";
import { signIn } from "../support/session";
import { e2e, USERS } from "../support/env";
import { uid } from "../support/api";
import { closeDb, db, one } from "../support/db";
import { killViaApi, receiptVersion } from "../support/kill";
import { DECISION_WORDS, PHASE_WORDS, RUNG_STATUS_WORDS, SETTLED_WORDS } from "../../lib/control/stop-words";

test.afterAll(closeDb);

// Identifiers as the console prints them (prefix_random, maybe cut short with "…"): names, not words.
const IDS = /\b(?:team|user|mem|key|run|lease|op|stop|set|clm|eff|rec|unc|rcpt|prov|whk|scope|view)_[A-Za-z0-9_-]{6,}…?/g;
const SNAKE = /\b[a-z]+_[a-z_]+\b/;

/**
 * The text a person sees in `root`: every rendered text node, except inside code, pre and download links
 * (where the names as written belong) and inside `ignore` (rows other journeys left on a shared page).
 */
async function visibleText(root: Locator, ignore: string[] = []): Promise<string[]> {
  return root.evaluate((el, skip) => {
    const out: string[] = [];
    const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      const parent = n.parentElement;
      const text = n.textContent?.trim();
      if (!parent || !text) continue;
      if (parent.closest(["code", "pre", "a[download]", "script", "style", ...skip].join(", "))) continue;
      if (!parent.checkVisibility()) continue;
      out.push(text);
    }
    return out;
  }, ignore);
}

/** No snake_case in the words, and no "complete" beside "incomplete". */
async function expectPlainWords(root: Locator, where: string, ignore: string[] = []): Promise<void> {
  const texts = await visibleText(root, ignore);
  const snake = texts.map((t) => t.replace(IDS, "")).filter((t) => SNAKE.test(t));
  expect(snake, `${where}: snake_case in visible text`).toEqual([]);
  const all = texts.join(" ");
  if (/\bincomplete\b/i.test(all)) expect(all, `${where}: "complete" beside "incomplete"`).not.toMatch(/\bcomplete\b/i);
}

const badge = (scope: Page | Locator, state: string) => scope.locator(`.badge[data-state="${state}"] .badge-value`).first();
const main = (page: Page) => page.locator("main");

test("a stopped-and-quiet stop reads the same on the barrier, receipt, run and stops pages, and its ladder never says 'not stopped'", async ({
  page,
}) => {
  // A run that never acknowledges the stop and has nothing in flight: stopped and quiet, observed not proven.
  const run = await e2e.agent().createRun({ taskId: uid("vocab-quiet"), title: "vocabulary: quiet stop" });
  const barrierId = await killViaApi(run.runId, "e2e: one vocabulary, quiet");
  expect((await receiptVersion(barrierId, 1)).decision).toBe("stopped_and_quiet");
  const decision = DECISION_WORDS.stopped_and_quiet;
  const phase = PHASE_WORDS.complete;
  await signIn(page, USERS.viewer);

  await page.goto(`/barriers/${barrierId}`);
  await expect(page.getByRole("heading", { level: 1 })).toContainText(decision);
  await expect(badge(page, "complete")).toHaveText(phase);
  await expect(badge(page, "stopped_and_quiet")).toHaveText(decision);
  const observed = page.locator('[data-rung="observed_by_target"]');
  await expect(observed.locator(".rung-status")).toHaveText(RUNG_STATUS_WORDS.uncertain);
  await expect(observed).not.toContainText(/not stopped|not proof/);
  await expect(observed).toContainText("the stop does not rest on it");
  await expect(page.getByRole("list", { name: "What the evidence shows" })).toContainText(`${decision}:`);
  await expectPlainWords(main(page), "barrier page");

  await page.goto(`/receipts/${barrierId}`);
  await expect(page.getByRole("heading", { level: 1 })).toHaveText(decision);
  await expect(page.getByTestId("receipt-answer")).toHaveText(new RegExp(`^${decision}: `));
  await expectPlainWords(main(page), "receipt page");

  await page.goto(`/runs/${run.runId}`);
  const barriers = page.getByRole("region", { name: "Barriers of this tree" });
  await expect(badge(barriers, "complete")).toHaveText(phase);
  await expect(badge(barriers, "stopped_and_quiet")).toHaveText(decision);
  await expect(page.locator(".barrier-card h2")).toContainText(`${decision} — barrier`);
  await expectPlainWords(main(page), "run page");

  await page.goto("/stops");
  const row = page.locator(`tr[data-stop-id="${barrierId}"]`);
  await expect(row.getByRole("link", { name: decision })).toHaveAttribute("href", `/receipts/${barrierId}`);
  await expect(row).toContainText("1 with a receipt");
  await expectPlainWords(row, "stops list");
});

test("a stop with one unknown: the open-work queue names the barrier that lists it and says why in the barrier's words", async ({
  page,
}) => {
  // The executor gave up on a call before the kill (its outcome unknown, no settlement): the barrier lists it.
  const agent = e2e.agent();
  const run = await agent.createRun({ taskId: uid("vocab-unknown"), title: "vocabulary: one unknown" });
  const operationId = uid("vocab-op");
  expect((await agent.gate(run, operationId, "deploy.apply")).decision).toBe("allow");
  await (
    await db()
  ).query("UPDATE operations SET state = 'aborted_unknown', state_reason = 'transport_lost', finished_at = now() WHERE operation_id = $1", [
    operationId,
  ]);
  const rec = await one<{ id: string }>(
    "SELECT r.id FROM reconciliations r JOIN operations o ON o.id = r.operation_id WHERE o.operation_id = $1",
    [operationId],
  );
  const barrierId = await killViaApi(run.runId, "e2e: one vocabulary, unknown");
  expect((await receiptVersion(barrierId, 1)).decision).toBe("stop_incomplete");
  const decision = DECISION_WORDS.stop_incomplete;
  await signIn(page, USERS.manager);

  // The barrier: phase and decision in their words, the unknown with why.
  await page.goto(`/barriers/${barrierId}`);
  await expect(page.getByRole("heading", { level: 1 })).toContainText(decision);
  await expect(badge(page, "complete")).toHaveText(PHASE_WORDS.complete);
  await expect(badge(page, "stop_incomplete")).toHaveText(decision);
  const settlement = page.locator("tr", { hasText: operationId });
  await expect(badge(settlement, "unknown")).toHaveText(SETTLED_WORDS.unknown);
  const why = (await settlement.locator("td.why").innerText()).trim();
  expect(why).toMatch(/^its executor gave up/);
  await expect(page.getByRole("list", { name: "What the evidence shows" })).toContainText(`${operationId} unknown — ${why}`);
  await expect(page.locator('[data-rung="effects_settled"] .rung-status')).toHaveText(RUNG_STATUS_WORDS.uncertain);
  await expectPlainWords(main(page), "barrier page");

  // Open work: the same operation, the same why, a link to that barrier's receipt — never "no stop".
  await page.goto("/reconciliations");
  const queued = page.locator(`tr[data-reconciliation="${rec.id}"]`);
  await expect(queued.locator("td.why")).toHaveText(why);
  await expect(queued.getByRole("link", { name: "receipt" })).toHaveAttribute("href", `/receipts/${barrierId}`);
  await expect(queued).not.toContainText("no stop");
  await expectPlainWords(main(page), "open work", [
    `tr[data-reconciliation]:not([data-reconciliation="${rec.id}"])`,
    "tr[data-recovery-id]",
  ]);

  // The receipt and the run page: the same decision, the same phase.
  await page.goto(`/receipts/${barrierId}`);
  await expect(page.getByRole("heading", { level: 1 })).toHaveText(decision);
  await expect(page.getByRole("region", { name: "Still open" })).toContainText(operationId);
  await expectPlainWords(main(page), "receipt page");
  await page.goto(`/runs/${run.runId}`);
  await expect(page.locator(".barrier-card h2")).toContainText(`${decision} — barrier`);
  await expect(badge(page.getByRole("region", { name: "Barriers of this tree" }), "stop_incomplete")).toHaveText(decision);
  await expectPlainWords(main(page), "run page");

  await page.goto("/stops");
  const row = page.locator(`tr[data-stop-id="${barrierId}"]`);
  await expect(row.getByRole("link", { name: decision })).toBeVisible();
  await expectPlainWords(row, "stops list");
});

test("a fleet stop of 2 selected runs says 'selected' once, and its page uses the barriers' words", async ({ page }) => {
  const agent = e2e.agent();
  const task = uid("vocab-fleet");
  for (let i = 0; i < 2; i++) await agent.createRun({ taskId: `${task}-${i}`, title: `vocabulary fleet ${i}` });
  await signIn(page, USERS.operator);
  await page.goto(`/runs?q=${task}`);
  await expect(page.getByRole("link", { name: "vocabulary fleet 0", exact: true })).toBeVisible();
  await page.getByRole("checkbox", { name: "Select every run on this page" }).check();
  const bar = page.getByRole("region", { name: "Selection" });
  await expect(bar.locator("span").first()).toHaveText("2 runs selected for a fleet stop.");
  await bar.getByRole("button", { name: "Kill selected…" }).click();
  const dialog = page.getByRole("dialog", { name: "Kill 2 selected runs" });
  await expect(dialog.getByTestId("fleet-dry-run")).toContainText("covers 2 runs in 2 trees");
  await expect(dialog).not.toContainText(/selected.*selected/);
  await expectPlainWords(dialog, "fleet-stop dialog");
  await dialog.getByLabel(/Reason/).fill("e2e: one vocabulary, fleet");
  await dialog.getByRole("button", { name: "Kill them and start the barriers" }).click();

  await page.waitForURL(/\/stops\/scope_/);
  const stopId = page.url().match(/\/stops\/(scope_[^?/#]+)/)![1]!;
  const receipt = page.getByTestId("fleet-receipt");
  await expect(receipt).toContainText(DECISION_WORDS.stopped_and_quiet, { timeout: 60_000 });
  await expect(page.getByTestId("stop-complete")).toContainText("2 of 2");
  const barriers = page.getByRole("region", { name: "Barriers of this fleet stop (table)" });
  await expect(barriers.locator("tbody tr")).toHaveCount(2);
  for (const r of await barriers.locator("tbody tr").all()) {
    await expect(r.locator("td").nth(2)).toHaveText(PHASE_WORDS.complete);
    await expect(r.locator("td").nth(3)).toHaveText(DECISION_WORDS.stopped_and_quiet);
  }
  await expectPlainWords(main(page), "fleet-stop page");

  // Each barrier's own page says the same words as the fleet-stop page's row.
  const first = (await barriers.locator("tbody tr").first().getByRole("link").nth(1).getAttribute("href"))!;
  await page.goto(first);
  await expect(badge(page, "complete")).toHaveText(PHASE_WORDS.complete);
  await expect(badge(page, "stopped_and_quiet")).toHaveText(DECISION_WORDS.stopped_and_quiet);

  await page.goto("/stops");
  const row = page.locator(`tr[data-stop-id="${stopId}"]`);
  await expect(row.getByRole("link", { name: DECISION_WORDS.stopped_and_quiet })).toBeVisible();
  await expect(row).toContainText("2 targets, barriers 2 started / 2 with a receipt");
  await expectPlainWords(main(page), "stops list", [`tr[data-stop-id]:not([data-stop-id="${stopId}"])`]);

  // The approvals and the glossary say the same words (the glossary's names as written are code).
  for (const path of ["/approvals", "/glossary"]) {
    await page.goto(path);
    await expectPlainWords(main(page), path);
  }
  await expect(page.locator('[id="receipt-issued"] dt')).toContainText(PHASE_WORDS.complete);
  await expect(page.locator('[id="rung-uncertain"] dt')).toContainText(RUNG_STATUS_WORDS.uncertain);
});
