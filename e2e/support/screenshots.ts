// Screenshots of the main pages, taken by the journeys at the moment each page shows something real,
// saved to docs/screenshots/ for the README.
import path from "node:path";
import type { Page } from "@playwright/test";

const DIR = path.resolve(import.meta.dirname, "../../docs/screenshots");

export async function capture(page: Page, name: string, opts: { fullPage?: boolean } = {}): Promise<void> {
  // The console keeps an event stream open, so "network idle" never comes: wait for fonts and paint.
  await page.evaluate(() => document.fonts.ready);
  await page.screenshot({ path: path.join(DIR, `${name}.png`), fullPage: opts.fullPage ?? false, animations: "disabled", caret: "hide" });
}
