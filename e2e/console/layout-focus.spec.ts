// Keyboard and small screens (docs/console.md#keyboard-and-small-screens): the skip link is the first
// Tab stop, a client navigation (a kill's move to its barrier and receipt too) puts focus on the new
// page's heading, a dialog closed with Esc gives focus back to the button that opened it, every input
// (a date input too) shows a focus ring, and at 390 px no page is wider than the screen — wide tables
// scroll inside their card; at 1280 px the wide tables (in-flight calls, settlements, the audit log) fit
// their card with no cell clipped, and the webhook URL field keeps a readable width.
import { randomBytes } from "node:crypto";
import { expect, test, type Page } from "@playwright/test";
import { signIn } from "../support/session";
import { e2e, USERS } from "../support/env";
import { uid } from "../support/api";
import { liveRun } from "../support/live-run";
import { killViaApi, receiptVersion } from "../support/kill";
import { closeDb } from "../support/db";

test.afterAll(closeDb);

const focusedOutline = (page: Page) =>
  page.evaluate(() => {
    const el = document.activeElement as HTMLElement;
    const s = getComputedStyle(el);
    return { tag: el.tagName.toLowerCase(), type: el.getAttribute("type"), style: s.outlineStyle, width: parseFloat(s.outlineWidth) };
  });

test("skip link first, focus on the heading after navigation, back on the opener after Esc, a ring on date inputs", async ({ page }) => {
  const run = await e2e.agent().createRun({ taskId: uid("focus"), title: "focus journey" });
  await signIn(page, USERS.operator);
  await page.goto("/runs");
  await expect(page.getByRole("heading", { level: 1, name: "Runs" })).toBeVisible();

  // The first Tab stop skips the navigation; the next one is inside the page.
  await page.keyboard.press("Tab");
  const skip = page.getByRole("link", { name: "Skip to main content" });
  await expect(skip).toBeFocused();
  await expect(skip).toBeVisible();
  await page.keyboard.press("Enter");
  await page.keyboard.press("Tab");
  expect(await page.evaluate(() => !!document.activeElement?.closest("main"))).toBe(true);

  // A date input shows a ring when focused from the keyboard.
  await page.getByLabel("From").focus();
  await page.keyboard.press("Tab");
  await page.keyboard.press("Shift+Tab");
  const ring = await focusedOutline(page);
  expect(ring.type).toBe("date");
  expect(ring.style).not.toBe("none");
  expect(ring.width).toBeGreaterThanOrEqual(2);

  // A client navigation moves focus to the new page's heading.
  await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Stops" }).click();
  await expect(page.getByRole("heading", { level: 1, name: "Stops" })).toBeFocused();
  await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Runs" }).click();
  await expect(page.getByRole("heading", { level: 1, name: "Runs" })).toBeFocused();

  // Esc on the kill dialog: focus goes back to Kill…, not to <body>.
  await page.goto(`/runs/${run.runId}`);
  const kill = page.getByRole("group", { name: "Run controls" }).getByRole("button", { name: "Kill…" });
  await kill.focus();
  await page.keyboard.press("Enter");
  const dialog = page.getByRole("dialog", { name: "Kill this run" });
  await expect(dialog).toBeVisible();
  await page.keyboard.press("Escape");
  await expect(dialog).toBeHidden();
  await expect(kill).toBeFocused();
  // Cancel does the same.
  await kill.click();
  await page.getByRole("dialog", { name: "Kill this run" }).getByRole("button", { name: "Cancel" }).click();
  await expect(kill).toBeFocused();

  // After a kill the page moves to the barrier, then to the receipt: focus is on each one's heading.
  await kill.click();
  const confirm = page.getByRole("dialog", { name: "Kill this run" });
  await confirm.getByLabel(/Reason/).fill("e2e: focus follows the kill");
  await confirm.getByRole("button", { name: "Kill run and start the barrier" }).click();
  await page.waitForURL(/\/barriers\/stop_/);
  await expect(page.getByRole("heading", { level: 1 })).toBeFocused();
  await page.waitForURL(/\/receipts\/stop_[^?]+$/, { timeout: 60_000 });
  await expect(page.getByRole("heading", { level: 1 })).toBeFocused();
});

test("at 390 px no console page is wider than the screen: tables scroll inside their card", async ({ page }) => {
  await e2e.agent().createRun({ taskId: uid("narrow"), title: "narrow screen run with a rather long title to widen things" });
  await page.setViewportSize({ width: 390, height: 844 });
  await signIn(page, USERS.admin);
  for (const path of [
    "/runs",
    "/stops",
    "/reconciliations",
    "/approvals",
    "/policies",
    "/audit",
    "/keys",
    "/webhooks",
    "/people",
    "/account",
  ]) {
    await page.goto(path);
    await expect(page.getByRole("heading", { level: 1 })).toBeVisible();
    await notWiderThanScreen(page, path);
  }
});

/** What does not fit in a table region at the page's width: clipped cells (or anything inside them that hides its overflow), and a table wider than its card. */
async function clipped(page: Page, region: string) {
  return page.getByRole("region", { name: region }).evaluate((wrap) => {
    const out: string[] = [];
    if (wrap.scrollWidth > wrap.clientWidth + 1) out.push(`the table is wider than its card (${wrap.scrollWidth} > ${wrap.clientWidth})`);
    for (const el of Array.from(wrap.querySelectorAll("th, td, td *"))) {
      const s = getComputedStyle(el);
      const hides = el.matches("th, td") || s.overflowX !== "visible" || s.textOverflow === "ellipsis";
      if (hides && el.scrollWidth > el.clientWidth + 1 && el.clientWidth > 0)
        out.push(
          `${el.tagName.toLowerCase()}.${el.className} "${(el.textContent ?? "").slice(0, 40)}" (${el.scrollWidth} > ${el.clientWidth})`,
        );
    }
    return out;
  });
}

/** The page is no wider than the screen; the outermost elements that stick out are named in the failure. */
async function notWiderThanScreen(page: Page, path: string) {
  const w = await page.evaluate(() => {
    const screen = document.documentElement.clientWidth;
    const wide = Array.from(document.querySelectorAll("body *"))
      .filter(
        (el) =>
          el.getBoundingClientRect().right > screen + 1 &&
          !(el.parentElement && el.parentElement.getBoundingClientRect().right > screen + 1),
      )
      .slice(0, 5)
      .map((el) => `${el.tagName.toLowerCase()}.${el.className}`);
    return { page: document.documentElement.scrollWidth, screen, wide };
  });
  expect(w.page, `page width of ${path}: ${w.wide.join(" | ")}`).toBeLessThanOrEqual(w.screen);
}

test("at 1280 px nothing is clipped: in-flight calls, settlements, the audit log, the webhook URL field", async ({ page }) => {
  await page.setViewportSize({ width: 1280, height: 800 });
  // A provider job id with no place to break: the kind that got clipped.
  const jobId = `job_${randomBytes(20).toString("hex")}`;
  const live = await liveRun("Deploy the payments API to every production region with a canary first", "cancel_cleanly", { jobId });
  await signIn(page, USERS.admin);

  // The run page: the in-flight call shows its provider and job in full.
  await page.goto(`/runs/${live.run.runId}`);
  const inFlight = page.getByRole("region", { name: "In-flight calls (table)" });
  await expect(inFlight).toContainText(jobId);
  expect(await clipped(page, "In-flight calls (table)")).toEqual([]);
  await notWiderThanScreen(page, "/runs/…");

  // The barrier page: each settlement's provider and job in full.
  const barrierId = await killViaApi(live.run.runId, "e2e: layout at 1280 px");
  await receiptVersion(barrierId, 1);
  await page.goto(`/barriers/${barrierId}`);
  await expect(page.getByRole("region", { name: "Settlements (table)" })).toContainText(jobId);
  expect(await clipped(page, "Settlements (table)")).toEqual([]);
  await notWiderThanScreen(page, "/barriers/…");

  // The audit log: before and after stay inside the card (the kill wrote long ones).
  await page.goto("/audit");
  await expect(page.getByRole("region", { name: "Audit events (table)" })).toBeVisible();
  expect(await clipped(page, "Audit events (table)")).toEqual([]);
  await notWiderThanScreen(page, "/audit");

  // The webhook URL field is wide enough to read a URL.
  await page.goto("/webhooks");
  const url = page.getByLabel("URL (http or https)");
  await expect(url).toBeVisible();
  expect((await url.boundingBox())!.width).toBeGreaterThanOrEqual(360);
  await notWiderThanScreen(page, "/webhooks");
});
