// The browser findings that had no journey of their own (docs/console-tests.md, "Findings from the
// browser journeys"): badge and dimmed-row contrast measured in the browser (WCAG AA, light and dark),
// an in-flight call labelled running and its provider job shown whole, an expired key listed as
// expired, a Kill that the server answers with a 500 (error shown, reason kept, nothing done, the
// retry works), and the audit log's actor filter taking an e-mail.
import { expect, test, type Page } from "@playwright/test";
import { signIn } from "../support/session";
import { e2e, USERS } from "../support/env";
import { uid } from "../support/api";
import { one, closeDb } from "../support/db";
import { liveRun } from "../support/live-run";

test.afterAll(closeDb);

interface Measured {
  what: string;
  text: string;
  ratio: number;
}

/**
 * The WCAG contrast ratio of every element matching `selector` that has its own text: its computed
 * colour against the first opaque background behind it, with every ancestor's opacity applied (a row
 * dimmed by `opacity` is as faint as it looks). Colours go through a canvas, so any CSS colour syntax
 * (rgb(), color(srgb …) from color-mix()) reads as sRGB bytes.
 */
async function contrasts(page: Page, selector: string): Promise<Measured[]> {
  return page.evaluate((sel) => {
    const ctx = document.createElement("canvas").getContext("2d", { willReadFrequently: true })!;
    const rgba = (css: string): [number, number, number, number] => {
      ctx.clearRect(0, 0, 1, 1);
      ctx.fillStyle = "#000";
      ctx.fillStyle = css;
      ctx.fillRect(0, 0, 1, 1);
      const d = ctx.getImageData(0, 0, 1, 1).data;
      return [d[0]!, d[1]!, d[2]!, d[3]! / 255];
    };
    const over = (fg: number[], bg: number[], a: number) => fg.slice(0, 3).map((c, i) => c * a + bg[i]! * (1 - a));
    const lum = (c: number[]) => {
      const [r, g, b] = c.map((v) => {
        const s = v / 255;
        return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
      });
      return 0.2126 * r! + 0.7152 * g! + 0.0722 * b!;
    };
    const background = (el: Element): number[] => {
      // Transparent layers are composed from the page's background up to the element.
      const layers: [number, number, number, number][] = [];
      for (let e: Element | null = el; e; e = e.parentElement) layers.push(rgba(getComputedStyle(e).backgroundColor));
      let bg = [255, 255, 255];
      for (const l of layers.reverse()) bg = over(l, bg, l[3]);
      return bg;
    };
    const out: { what: string; text: string; ratio: number }[] = [];
    for (const el of Array.from(document.querySelectorAll(sel))) {
      const own = Array.from(el.childNodes).some((n) => n.nodeType === Node.TEXT_NODE && n.textContent!.trim());
      if (!own || !(el as HTMLElement).offsetParent) continue;
      const bg = background(el);
      const c = rgba(getComputedStyle(el).color);
      let opacity = 1;
      for (let e: Element | null = el; e; e = e.parentElement) opacity *= Number(getComputedStyle(e).opacity);
      const fg = over(over(c, bg, c[3]), bg, opacity);
      const [hi, lo] = [lum(fg), lum(bg)].sort((a, b) => b - a);
      out.push({
        what: `${el.tagName.toLowerCase()}.${el.className}`,
        text: el.textContent!.trim().slice(0, 40),
        ratio: (hi! + 0.05) / (lo! + 0.05),
      });
    }
    return out;
  }, selector);
}

test("badges and dimmed rows meet WCAG AA contrast (4.5:1) in light and dark", async ({ page }) => {
  // A killed run, so the list has a dimmed row, next to the live ones' badges.
  const agent = e2e.agent();
  const dim = await agent.createRun({ taskId: uid("dim"), title: "dimmed killed run" });
  await signIn(page, USERS.operator);
  await page.goto(`/runs/${dim.runId}`);
  await page.getByRole("button", { name: "Kill…" }).click();
  const kill = page.getByRole("dialog", { name: "Kill this run" });
  await kill.getByLabel(/Reason/).fill("e2e: a row to dim");
  await kill.getByRole("button", { name: "Kill run and start the barrier" }).click();
  await page.waitForURL(/\/barriers\//);

  for (const scheme of ["light", "dark"] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    await page.goto("/runs");
    await expect(page.locator("tr.row-dim").first()).toBeVisible();
    const badges = await contrasts(page, ".badge, .badge *");
    const dimmed = await contrasts(page, "tr.row-dim td, tr.row-dim td *");
    expect(badges.length, `${scheme}: badges measured`).toBeGreaterThan(3);
    expect(dimmed.length, `${scheme}: dimmed cells measured`).toBeGreaterThan(3);
    const low = [...badges, ...dimmed].filter((m) => m.ratio < 4.5).map((m) => `${m.what} "${m.text}" ${m.ratio.toFixed(2)}:1`);
    expect(low, `${scheme}: below 4.5:1`).toEqual([]);
  }
});

test("an in-flight call is labelled running, and its provider job is shown whole", async ({ page }) => {
  const live = await liveRun("in-flight labels");
  test.skip(!live.jobId, "needs the simulated provider");
  await signIn(page, USERS.viewer);
  await page.goto(`/runs/${live.run.runId}`);
  const table = page.getByRole("region", { name: "In-flight calls (table)" });
  const row = table.locator("tbody tr", { hasText: "deploy.apply" });
  await expect(row).toContainText("running (registered as queued work)");
  const job = row.locator("td").last();
  await expect(job).toHaveText(`deploy-sim / ${live.jobId}`);
  // Not clipped: the cell's text fits its box (it wraps rather than overflowing the column).
  expect(await job.evaluate((el) => el.scrollWidth <= el.clientWidth)).toBe(true);
  await expect(table).not.toContainText(/\bqueued\b(?! work)/);
});

test("an expired API key is listed as expired, not active", async ({ page }) => {
  await signIn(page, USERS.admin);
  await page.goto("/keys");
  const name = uid("expiring");
  await page.getByLabel("Name").fill(name);
  await page.getByLabel("Kind").selectOption("agent");
  await page.getByRole("button", { name: "Create key" }).click();
  await expect(page.getByTestId("new-key-secret")).toBeVisible();
  await one("UPDATE api_keys SET expires_at = now() - interval '1 minute' WHERE name = $1 RETURNING id", [name]);
  await page.reload();
  const row = page.getByRole("row", { name: new RegExp(name) });
  await expect(row).toContainText("expired");
  await expect(row).not.toContainText(/\bactive\b/);
});

test("a Kill the server answers with a 500 shows the error, keeps the reason, kills nothing, and the retry works", async ({ page }) => {
  const run = await e2e.agent().createRun({ taskId: uid("kill500"), title: "kill answered 500" });
  await signIn(page, USERS.operator);
  await page.goto(`/runs/${run.runId}`);
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("kill answered 500");
  // The server action POST answers 500 without running.
  await page.route(`**/runs/${run.runId}`, (route) =>
    route.request().method() === "POST"
      ? route.fulfill({ status: 500, contentType: "text/plain", body: "Internal Server Error" })
      : route.continue(),
  );
  await page.getByRole("button", { name: "Kill…" }).click();
  const dialog = page.getByRole("dialog", { name: "Kill this run" });
  await dialog.getByLabel(/Reason/).fill("runaway spend");
  await dialog.getByRole("button", { name: "Kill run and start the barrier" }).click();
  await expect(dialog.getByRole("alert")).toContainText("Not done");
  await expect(dialog.getByRole("button", { name: "Cancel" })).toBeEnabled();
  await expect(dialog.getByLabel(/Reason/)).toHaveValue("runaway spend");
  expect((await one<{ lifecycle: string }>("SELECT lifecycle::text FROM runs WHERE id = $1", [run.runId])).lifecycle).toBe("normal");
  await page.unroute(`**/runs/${run.runId}`);
  await dialog.getByRole("button", { name: "Retry: Kill run and start the barrier" }).click();
  await page.waitForURL(/\/barriers\//);
  expect((await one<{ lifecycle: string }>("SELECT lifecycle::text FROM runs WHERE id = $1", [run.runId])).lifecycle).toBe("killed");
});

test("the audit log's actor filter takes the e-mail shown in the Actor column", async ({ page }) => {
  const run = await e2e.agent().createRun({ taskId: uid("audited"), title: "audited by e-mail" });
  await signIn(page, USERS.operator);
  await page.goto(`/runs/${run.runId}`);
  await page.getByRole("button", { name: "Pause", exact: true }).click();
  const dialog = page.getByRole("dialog", { name: "Pause this run" });
  await dialog.getByLabel(/Reason/).fill("e2e: an audited pause");
  await dialog.getByRole("button", { name: "Pause run" }).click();
  await expect(dialog).toBeHidden();

  await page.goto("/audit");
  await page.getByLabel("Actor").fill(USERS.operator);
  await page.getByRole("button", { name: "Filter" }).click();
  await page.waitForURL(/actor=/);
  const actors = page.locator("tbody tr td:nth-child(3)");
  await expect(actors.first()).toHaveText(USERS.operator);
  // Every row is that person's: in the console, or through their own operator key (other journeys use it).
  for (const a of await actors.allTextContents())
    expect(a === USERS.operator || a.startsWith(`${USERS.operator} via operator key`), a).toBe(true);
  await expect(page.locator("tbody tr", { hasText: run.runId })).toContainText("run.pause");
});
