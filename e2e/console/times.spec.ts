// One time format on every console page (docs/console.md#times): "YYYY-MM-DD HH:MM:SS <zone>" in the
// browser's zone — whatever its locale — with the exact ISO instant in dateTime and title, and a header
// switch to UTC that the browser keeps across reloads. A New York browser in German checks a receipt
// and a run page.
import { expect, test, type Page } from "@playwright/test";
import { signIn } from "../support/session";
import { USERS } from "../support/env";
import { closeDb } from "../support/db";
import { liveRun } from "../support/live-run";
import { killViaApi, receiptVersion } from "../support/kill";

test.afterAll(closeDb);
test.use({ timezoneId: "America/New_York", locale: "de-DE" });

const NEW_YORK: Record<string, number> = { EST: -5, EDT: -4 };
const FORMAT = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2}) ([A-Z]{3})$/;

/** Every absolute time on the page, as shown, with its dateTime and title. */
async function shownTimes(page: Page): Promise<{ text: string; dateTime: string; title: string }[]> {
  return page.locator("main time").evaluateAll((els) =>
    els
      .map((el) => ({
        // "both" shows relative then absolute (.abs); "relative" alone has no absolute text to check.
        text: (el.querySelector(".abs") ?? (/ago$|^in |just now/.test(el.textContent ?? "") ? null : el))?.textContent?.trim() ?? "",
        dateTime: el.getAttribute("datetime") ?? "",
        title: el.getAttribute("title") ?? "",
      }))
      .filter((t) => t.text !== ""),
  );
}

/** The shown wall-clock time, read back in its zone, is the dateTime instant (to the second). */
function expectSameInstant(t: { text: string; dateTime: string }, zones: Record<string, number>) {
  const m = FORMAT.exec(t.text);
  expect(m, `"${t.text}" is in the one format`).not.toBeNull();
  const [, y, mo, d, h, mi, s, zone] = m!;
  expect(Object.keys(zones), `"${t.text}" is in the expected zone`).toContain(zone);
  const utc = Date.UTC(+y!, +mo! - 1, +d!, +h!, +mi!, +s!) - zones[zone!]! * 3_600_000;
  expect(utc).toBe(Math.floor(Date.parse(t.dateTime) / 1000) * 1000);
}

async function expectAllIn(page: Page, zones: Record<string, number>) {
  await expect(page.locator("main time").first()).toBeVisible();
  // After hydration the browser's choice replaces the server's UTC.
  await expect.poll(async () => (await shownTimes(page)).every((t) => (FORMAT.exec(t.text)?.[7] ?? "") in zones)).toBe(true);
  const times = await shownTimes(page);
  expect(times.length).toBeGreaterThanOrEqual(2);
  for (const t of times) {
    expectSameInstant(t, zones);
    expect(t.dateTime).toBe(new Date(t.dateTime).toISOString());
    expect(t.title).toContain(t.dateTime);
  }
}

test("times read in the browser's zone in one format, switch to UTC, and the choice survives a reload", async ({ page }) => {
  const { run } = await liveRun("Times journey");
  const barrierId = await killViaApi(run.runId, "e2e: times");
  await receiptVersion(barrierId, 1);
  await signIn(page, USERS.viewer);

  await page.goto(`/receipts/${barrierId}`);
  await expectAllIn(page, NEW_YORK);
  await page.goto(`/runs/${run.runId}`);
  await expectAllIn(page, NEW_YORK);

  const toggle = page.getByRole("button", { name: "Times in UTC" });
  await expect(toggle).toHaveAttribute("aria-pressed", "false");
  await toggle.click();
  await expect(toggle).toHaveAttribute("aria-pressed", "true");
  await expectAllIn(page, { UTC: 0 });

  await page.goto(`/receipts/${barrierId}`);
  await expect(page.getByRole("button", { name: "Times in UTC" })).toHaveAttribute("aria-pressed", "true");
  await expectAllIn(page, { UTC: 0 });
  await page.reload();
  await expectAllIn(page, { UTC: 0 });

  await page.getByRole("button", { name: "Times in UTC" }).click();
  await expectAllIn(page, NEW_YORK);
});
