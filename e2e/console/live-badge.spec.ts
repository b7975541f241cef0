// The Live badge tells the truth without crying wolf. The console's stream is rotated by the server on
// a timer (QUIESCE_CONSOLE_STREAM_SECONDS, 4 s under e2e instead of 60 s): a planned rotation must not
// show "Reconnecting…" at all, while a real failure shows it once it has lasted a couple of seconds,
// and the badge comes back to Live when the stream does.
import { expect, test, type Page } from "@playwright/test";
import { signIn } from "../support/session";
import { USERS } from "../support/env";
import { liveBadge as badge } from "../support/console-errors";

/** Every text the badge shows, with the time it appeared, recorded in the page by a MutationObserver. */
async function recordBadge(page: Page): Promise<void> {
  await page.evaluate(() => {
    const el = document.querySelector(".live");
    const w = window as unknown as { __badge: { text: string; at: number }[] };
    w.__badge = [{ text: el?.textContent ?? "", at: Date.now() }];
    new MutationObserver(() => w.__badge.push({ text: el?.textContent ?? "", at: Date.now() })).observe(el!, {
      subtree: true,
      characterData: true,
      childList: true,
    });
  });
}
const badgeLog = (page: Page) => page.evaluate(() => (window as unknown as { __badge: { text: string; at: number }[] }).__badge);

test("planned stream rotations never show Reconnecting…; a real outage does after the grace period, then Live again", async ({ page }) => {
  test.setTimeout(90_000);
  await signIn(page, USERS.viewer);
  let opened = 0;
  page.on("request", (r) => {
    if (r.url().endsWith("/api/console/events")) opened++;
  });
  await page.goto("/runs");
  await expect(badge(page)).toHaveText("Live");
  await recordBadge(page);
  // Three rotations or more (every 4 s): the stream is re-opened each time, the badge never changes.
  await page.waitForTimeout(14_000);
  expect(opened).toBeGreaterThanOrEqual(3);
  expect((await badgeLog(page)).map((e) => e.text)).toEqual(["Live"]);

  // A real failure: the next reconnection (after the server's next rotation) cannot reach the server.
  let firstFailure = 0;
  await page.route("**/api/console/events", (route) => {
    if (!firstFailure) firstFailure = Date.now();
    return route.abort("connectionrefused");
  });
  await expect(badge(page)).toHaveText("Reconnecting…", { timeout: 15_000 });
  const shown = (await badgeLog(page)).find((e) => e.text === "Reconnecting…")!;
  expect(firstFailure).toBeGreaterThan(0);
  // Not at the first failed attempt: only once the failure has lasted the grace period (2.5 s).
  expect(shown.at - firstFailure).toBeGreaterThanOrEqual(2000);
  await page.unroute("**/api/console/events");
  await expect(badge(page)).toHaveText("Live", { timeout: 40_000 });
});
