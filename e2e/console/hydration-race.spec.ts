// React error #418 on the runs list, reproduced on purpose (docs/design/render-after-hydration.md). React
// hydrates the page's streamed part in a pass of its own after the shell, at the lowest priority, and
// the live stream's "open" (the Live badge changing) interrupts that pass when it lands during it:
// React throws the pass away and hydrates again. The first pass had already rendered the list, and
// react-query had put the list's query into the cache there; the second pass reads that entry, by then
// older than the staleTime (or invalidated by a control event), so useQuery says it is fetching, and
// the list rendered its "refreshing" spinner, which the server's HTML does not have.
//
// The timing is made certain instead of left to chance: the first time the page formats a time while
// hydrating (the list's or the run's first <Time>, after its query is in the cache), the browser's main
// thread waits 2 s, as a slow laptop's would be busy, and the live stream, held back until then, opens
// meanwhile. Built without the fix (the spinner rendered during hydration), both runs-list journeys
// fail with one "Minified React error #418" page error each; the run page, which renders no fetch
// state, passes either way and stays here as a guard.
import { expect, test } from "@playwright/test";
import { collectErrors, liveBadge as live } from "../support/console-errors";
import { signIn } from "../support/session";
import { e2e, USERS } from "../support/env";
import { uid } from "../support/api";

// Longer than the console's staleTime (1 s, components/providers.tsx), and time enough for the server
// to answer the stream while the page waits.
const STALL_MS = 2000;
const SIGNAL = "/__e2e/page-rendered";
const RELATIVE = /ago$|^just now$|^in \d/;

interface Marks {
  /** performance.now() when the page first formatted a time (rendering during hydration) */
  rendered?: number;
  /** when the live stream opened */
  open?: number;
  /** when a relative time ("3m ago") first showed: they appear only once the page has hydrated */
  hydrated?: number;
}

/** Runs in the page before any of its scripts. */
function instrument(args: { signal: string; relative: string }) {
  const relative = new RegExp(args.relative);
  const marks: Marks = {};
  (window as unknown as { __race: Marks }).__race = marks;
  if (!location.pathname.startsWith("/runs")) return;
  const toISOString = Date.prototype.toISOString;
  Date.prototype.toISOString = function (this: Date) {
    if (marks.rendered === undefined) {
      marks.rendered = performance.now();
      // A synchronous request: the main thread waits for the answer, which the test gives STALL_MS
      // after it has let the live stream through.
      const x = new XMLHttpRequest();
      x.open("POST", args.signal, false);
      x.send();
    }
    return toISOString.call(this);
  };
  const Source = window.EventSource;
  window.EventSource = class extends Source {
    constructor(url: string | URL, init?: EventSourceInit) {
      super(url, init);
      this.addEventListener("open", () => (marks.open ??= performance.now()));
    }
  };
  new MutationObserver(() => {
    if (marks.hydrated === undefined && [...document.querySelectorAll("td time")].some((t) => relative.test(t.textContent ?? "")))
      marks.hydrated = performance.now();
  }).observe(document, { subtree: true, childList: true, characterData: true });
}

const PAGES = [
  { name: "the runs list", path: () => "/runs" },
  { name: "the grouped runs list", path: () => "/runs?roots=1" },
  { name: "a run page", path: (runId: string) => `/runs/${runId}` },
];

for (const p of PAGES) {
  test(`${p.name}: the live stream opening in the middle of hydration on a slow machine is no hydration error`, async ({ page }) => {
    test.setTimeout(90_000);
    const run = await e2e.agent().createRun({ taskId: uid("task"), title: "Hydration race", harness: "codex" });
    const url = p.path(run.runId);
    await signIn(page, USERS.operator);

    let signalled!: () => void;
    const rendered = new Promise<void>((r) => (signalled = r));
    await page.route(`**${SIGNAL}`, async (route) => {
      signalled();
      await new Promise((r) => setTimeout(r, STALL_MS));
      await route.fulfill({ status: 204 });
    });
    let streams = 0;
    await page.route("**/api/console/events", async (route) => {
      // The page's first stream goes through only once the page is rendering (a slow server would do
      // the same); later ones (rotations) at once.
      if (streams++ === 0) await Promise.race([rendered, new Promise((r) => setTimeout(r, 20_000))]);
      await route.continue();
    });
    await page.addInitScript(instrument, { signal: SIGNAL, relative: RELATIVE.source });
    const errors = collectErrors(page);

    await page.goto(url);
    await expect(live(page)).toHaveText("Live");
    await expect(page.locator("td time").first()).toHaveText(RELATIVE);
    await page.waitForTimeout(1500); // the refetch the stale query starts once hydrated, and a poll

    // The race happened as intended: rendered, then the stream opened, then the page finished hydrating.
    const marks = await page.evaluate(() => (window as unknown as { __race: Marks }).__race);
    expect(marks.rendered, "the page formatted a time while hydrating").toBeDefined();
    expect(marks.open, "the stream opened after the page had started hydrating").toBeGreaterThan(marks.rendered!);
    expect(marks.hydrated, "the page finished hydrating after the stream had opened").toBeGreaterThan(marks.open!);
    expect(errors).toEqual([]);
    // Hydrated, not thrown away and rendered again on the client beside the server's copy.
    await expect(page.locator(".run-head")).toHaveCount(url.startsWith("/runs/") ? 1 : 0);
    await expect(page.locator("h1")).toHaveCount(1);
    if (!url.startsWith("/runs/")) {
      await expect(page.getByTestId("runs-count")).toHaveCount(1);
      await page.getByRole("checkbox", { name: "Group under root runs" }).click();
      await expect(page).toHaveURL(url === "/runs" ? /\/runs\?roots=1$/ : /\/runs$/);
    }
  });
}
