// The runs list as an operator uses it among many runs (docs/console.md#runs-list): filters from a shared
// URL, cursor pages, a root expanded to its children, a view saved and reopened, bad URL parameters
// ignored by name (not an error page), and the run's event-history timeline paged by cursor.
import { expect, test } from "@playwright/test";
import { signIn } from "../support/session";
import { e2e, USERS } from "../support/env";
import { uid, type ApiRun } from "../support/api";
import { closeDb, one } from "../support/db";

test.afterAll(closeDb);

test("filter by URL, page by cursor, expand a root, save and reopen a view, read the timeline", async ({ page }) => {
  test.setTimeout(180_000);
  const agent = e2e.agent();
  const tag = uid("scale");
  const root = await agent.createRun({ taskId: `${tag}-root`, title: `${tag} root`, harness: "codex" });
  await agent.createRun({ taskId: `${tag}-child-a`, title: `${tag} child a`, harness: "codex", parentRunId: root.runId });
  await agent.createRun({ taskId: `${tag}-child-b`, title: `${tag} child b`, harness: "codex", parentRunId: root.runId });
  const bulk: ApiRun[] = [];
  for (let i = 0; i < 60; i += 10)
    bulk.push(
      ...(await Promise.all(
        Array.from({ length: 10 }, (_, j) => agent.createRun({ taskId: `${tag}-bulk-${i + j}`, title: `${tag} bulk ${i + j}` })),
      )),
    );
  // 55 gate decisions: more than one page of the timeline.
  for (let i = 0; i < 55; i += 11)
    await Promise.all(Array.from({ length: 11 }, (_, j) => agent.gate(root, `${tag}-op-${i + j}`, "deploy")));

  await signIn(page, USERS.operator);

  // Filters from a shared URL.
  await page.goto(`/runs?q=${tag}&harness=codex`);
  await expect(page.getByTestId("runs-count")).toHaveText("3 runs match");
  await expect(page.getByLabel("Harness")).toHaveValue("codex");

  // Cursor pages: 63 runs, 50 a page.
  await page.goto(`/runs?q=${tag}`);
  await expect(page.getByTestId("runs-count")).toHaveText("63 runs match");
  const rowsOf = () => page.locator("tbody tr");
  await expect(rowsOf()).toHaveCount(50);
  await page.getByRole("navigation", { name: "Pages" }).getByRole("button", { name: "Next →" }).click();
  await expect(page).toHaveURL(/[?&]cursor=/);
  await expect(rowsOf()).toHaveCount(13);
  await expect(page.getByRole("link", { name: `${tag} root`, exact: true })).toBeVisible(); // the oldest is on the last page
  await page.getByRole("navigation", { name: "Pages" }).getByRole("button", { name: "← Previous" }).click();
  await expect(rowsOf()).toHaveCount(50);
  await expect(page.getByRole("link", { name: `${tag} bulk 59`, exact: true })).toBeVisible();

  // Grouped under roots: 61 roots; expanding the root shows its two children.
  await page.goto(`/runs?q=${tag}&roots=1&sort=oldest`);
  await expect(page.getByTestId("runs-count")).toHaveText("61 root runs match");
  await expect(page.getByRole("link", { name: `${tag} child a`, exact: true })).toHaveCount(0);
  const expand = page.getByRole("button", { name: `Expand ${tag} root (2 children)` });
  await expand.click();
  await expect(page.getByRole("button", { name: `Collapse ${tag} root (2 children)` })).toHaveAttribute("aria-expanded", "true");
  await expect(page.getByRole("link", { name: `${tag} child a`, exact: true })).toBeVisible();
  await expect(page.getByRole("link", { name: `${tag} child b`, exact: true })).toBeVisible();

  // Save this view, leave, reopen it from the saved views (also after a reload: it is stored).
  const views = page.getByRole("navigation", { name: "Saved views" });
  await views.getByRole("button", { name: "Save this view…" }).click();
  await views.getByLabel("View name").fill(`${tag} roots`);
  await views.getByRole("button", { name: "Save", exact: true }).click();
  await expect(views.getByRole("link", { name: `${tag} roots` })).toBeVisible();
  const saved = await one<{ query: string }>("SELECT query FROM saved_views WHERE name = $1", [`${tag} roots`]);
  expect(saved.query).toBe(`q=${tag}&roots=1&sort=oldest`);
  await page.goto("/runs");
  await page
    .getByRole("navigation", { name: "Saved views" })
    .getByRole("link", { name: `${tag} roots` })
    .click();
  await expect(page).toHaveURL(new RegExp(`q=${tag}&roots=1&sort=oldest`));
  await expect(page.getByTestId("runs-count")).toHaveText("61 root runs match");
  await page.reload();
  const reopened = page.getByRole("navigation", { name: "Saved views" });
  await reopened.getByRole("button", { name: `Delete view ${tag} roots` }).click();
  await expect(reopened.getByRole("link", { name: `${tag} roots` })).toHaveCount(0);
  expect((await one<{ n: string }>("SELECT count(*)::text AS n FROM saved_views WHERE name = $1", [`${tag} roots`])).n).toBe("0");

  // Bad URL parameters: the page answers, names what it ignored, and applies the rest.
  const res = await page.goto(`/runs?q=${tag}&status=sleeping&cursor=zzz&from=yesterday`);
  expect(res?.status()).toBe(200);
  await expect(page.getByTestId("ignored-params")).toContainText("status");
  await expect(page.getByTestId("ignored-params")).toContainText("cursor");
  await expect(page.getByTestId("runs-count")).toHaveText("63 runs match");
  // The JSON endpoints: the list's filters read the same way; their own parameters must be valid (400, not 500).
  const lenient = await page.request.get(`/api/console/runs?q=${tag}&status=sleeping&to=0000-01-01`);
  expect(lenient.status()).toBe(200);
  expect(((await lenient.json()) as { ignored: { key: string }[] }).ignored.map((i) => i.key).sort()).toEqual(["status", "to"]);
  expect((await page.request.get(`/api/console/runs?pageSize=1000`)).status()).toBe(400);
  expect((await page.request.get(`/api/console/runs/${root.runId}/timeline?cursor=garbage`)).status()).toBe(400);
  expect((await page.request.get(`/api/console/runs/run_missing/timeline`)).status()).toBe(404);

  // The run's timeline: registration, gate decisions, paged by cursor.
  await page.goto(`/runs/${root.runId}`);
  const timeline = page.getByTestId("run-timeline");
  await expect(timeline.locator("tbody tr")).toHaveCount(50);
  await expect(timeline).toContainText("allow");
  const pager = timeline.getByRole("navigation", { name: "Event history pages" });
  const older = pager.getByRole("button", { name: "Older →" });
  let pages = 1;
  await expect(timeline).toHaveAttribute("aria-busy", "false");
  while (await older.isEnabled()) {
    await older.click();
    pages++;
    await expect(pager).toContainText(`page ${pages}`);
    await expect(timeline).toHaveAttribute("aria-busy", "false"); // the page's own data, not the previous page's
  }
  expect(pages).toBeGreaterThanOrEqual(2);
  await expect(timeline).toContainText("run.register"); // the oldest event, on the last page
  await pager.getByRole("button", { name: "← Newer" }).click();
  await expect(pager).toContainText(`page ${pages - 1}`);
});
