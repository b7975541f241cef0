// The console renders cleanly in a real browser against the production build: the runs list and a run
// page load, hydrate and stay up without a React error (#418 was reported on both) or any other console
// error or page error, and the run header exists once in the DOM — also when the page's data arrives
// well after the shell and the live stream has opened in the meantime (the race that left a hidden
// streamed copy of the page behind).
import { expect, test } from "@playwright/test";
import { collectErrors, liveBadge as live } from "../support/console-errors";
import pg from "pg";
import { signIn } from "../support/session";
import { e2e, USERS } from "../support/env";
import { uid } from "../support/api";

test("the runs list and a run page hydrate with no console errors and one run header", async ({ page }) => {
  test.setTimeout(90_000);
  const run = await e2e.agent().createRun({ taskId: uid("task"), title: "Hydrate cleanly", harness: "codex" });
  await signIn(page, USERS.operator);
  const errors = collectErrors(page);

  // Full page loads (server render + hydration), not only client-side navigations.
  await page.goto("/runs");
  await expect(page.getByRole("heading", { level: 1, name: "Runs" })).toBeVisible();
  await expect(live(page)).toHaveText("Live");
  await page.goto("/runs?roots=1");
  await expect(page.getByRole("heading", { level: 1, name: "Runs" })).toBeVisible();
  await page.goto(`/runs/${run.runId}`);
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Hydrate cleanly");
  await expect(live(page)).toHaveText("Live");
  await page.reload();
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Hydrate cleanly");
  // Stay a while: the clocks tick, the poll refetches, the stream rotates (every 4 s under e2e).
  await page.waitForTimeout(6000);
  expect(await page.locator(".run-head").count()).toBe(1);

  // The page's data held back behind a lock while the shell hydrates and the stream opens: the page
  // must still arrive once, hydrated, with no error.
  const locker = new pg.Client({ connectionString: e2e.databaseUrl });
  await locker.connect();
  try {
    await locker.query("BEGIN");
    await locker.query("LOCK TABLE uncertain_intervals IN ACCESS EXCLUSIVE MODE"); // read by the run page only
    await page.goto(`/runs/${run.runId}`, { waitUntil: "commit" });
    await expect(live(page)).toHaveText("Live");
    await page.waitForTimeout(1000);
    await locker.query("COMMIT");
  } finally {
    await locker.end();
  }
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Hydrate cleanly");
  await page.waitForTimeout(2000);
  expect(await page.locator(".run-head").count()).toBe(1);
  // The controls work: the page is hydrated, not a dead copy.
  await page.getByRole("button", { name: "Pause", exact: true }).click();
  await expect(page.getByRole("dialog", { name: "Pause this run" })).toBeVisible();
  await page.keyboard.press("Escape");

  expect(errors).toEqual([]);
});

// The browser in another timezone and language than the server (New York, German), its clock ten
// minutes behind the server's: anything rendered from the local timezone, the locale or the local clock
// during hydration (a time formatted with toLocaleString(), "3 min ago" computed in render, a number in
// the reader's format) differs from the server's HTML and is React error #418. The server renders
// times as UTC; the reader's zone and the relative form appear only after hydration (components/time.tsx).
test.describe("in another timezone, language and clock than the server", () => {
  test.use({ timezoneId: "America/New_York", locale: "de-DE" });

  test("the runs list and a run page hydrate with no console error and one run header", async ({ page }) => {
    test.setTimeout(90_000);
    const run = await e2e.agent().createRun({ taskId: uid("task"), title: "Hydrate elsewhere", harness: "claude_code" });
    await page.clock.install({ time: Date.now() - 10 * 60_000 });
    await page.clock.resume();
    await signIn(page, USERS.operator);
    const errors = collectErrors(page);
    expect(await page.evaluate(() => [Intl.DateTimeFormat().resolvedOptions().timeZone, navigator.language])).toEqual([
      "America/New_York",
      "de-DE",
    ]);
    for (const url of ["/runs", "/runs?roots=1", `/runs/${run.runId}`]) {
      await page.goto(url);
      await expect(live(page)).toHaveText("Live");
      await page.waitForTimeout(1500); // a clock tick and a poll after hydration
      expect(await page.locator(".run-head").count()).toBe(url.startsWith("/runs/") ? 1 : 0);
    }
    expect(errors).toEqual([]);
    // The absolute times are in the browser's zone once hydrated; the relative ones follow the server's
    // clock once a JSON answer has told the browser its time (Date header): the run started a few seconds
    // ago, not "in 9m" by the browser's slow clock.
    const started = page.locator(".run-head .meta time").first();
    await expect(started).toContainText(/ E[SD]T$/);
    await expect(started).toContainText(/^(just now|\d+s ago|1m ago) /);
  });
});
