// Reconciling says one true thing: an unknown outcome at a provider with a job page links that page (in the
// row and in "Record the outcome"), one at a provider without a page says so; an empty list says what its
// filters hide — "Nothing assigned to you" with the team's others and unassigned, never "every settled
// effect is proven" while the team has open items; assigning and recording each answer in a toast
// (role=status); and the header's counts and the navigation's badge agree with the database throughout.
import { randomBytes } from "node:crypto";
import { expect, test, type Page } from "@playwright/test";
import { signIn } from "../support/session";
import { e2e } from "../support/env";
import { uid } from "../support/api";
import { closeDb, db, one } from "../support/db";
import { countsAgree, demoTeam, newMember, unassignedUnknown } from "../support/open-work";

test.afterAll(closeDb);

/** The team's open unknowns and who holds them, as the database has them. */
async function held(me: string) {
  return one<{ open: number; mine: number; nobody: number }>(
    `SELECT count(*)::int AS open, (count(*) FILTER (WHERE assignee_user_id = $2))::int AS mine,
            (count(*) FILTER (WHERE assignee_user_id IS NULL))::int AS nobody
       FROM reconciliations WHERE team_id = $1 AND status <> 'resolved'`,
    [await demoTeam(), me],
  );
}

const unknownsEmpty = (page: Page) => page.locator('[data-empty="unknowns"]');
const row = (page: Page, id: string) => page.locator(`tr[data-reconciliation="${id}"]`);

test("job page links, empty states per filter, a toast after assigning and after recording, counts that agree", async ({ page }) => {
  expect(e2e.simUrl, "the simulated provider (global setup) serves the job pages").not.toBeNull();
  // A job the simulated provider knows, so its page really answers.
  const jobId = uid("sim-job");
  const made = await fetch(`${e2e.simUrl}/jobs`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jobId, mode: "cancel_cleanly", delayMs: 300 }),
  });
  expect(made.ok, await made.text()).toBe(true);
  // A provider of the team without a job page.
  const plain = `no-page-${randomBytes(4).toString("hex")}`;
  await (
    await db()
  ).query("INSERT INTO providers (id, team_id, name, kind, status_url) VALUES ($1, $2, $3, 'http', 'https://status.example/check')", [
    `prov_e2e${randomBytes(6).toString("hex")}`,
    await demoTeam(),
    plain,
  ]);
  const linked = await unassignedUnknown("deploy-sim", jobId);
  const unlinked = await unassignedUnknown(plain, "job-without-a-page");
  const manager = await newMember("manager", "Mina");
  const member = await newMember("operator", "Otto");

  await signIn(page, manager.email);

  // "Assigned to me" while the team has open items held by others and by nobody: it says so, with the numbers.
  await page.goto("/reconciliations?owner=me");
  const h = await held(manager.id);
  expect(h.mine).toBe(0);
  expect(h.nobody).toBeGreaterThanOrEqual(2);
  await expect(unknownsEmpty(page)).toContainText("Nothing assigned to you");
  await expect(unknownsEmpty(page)).toContainText(
    `The team has ${h.open} unknown outcomes open: ${h.open - h.nobody} assigned to others, ${h.nobody} unassigned.`,
  );
  await expect(page.locator('[data-empty="recoveries"]')).toContainText("Nothing assigned to you");
  await expect(page.getByText(/every settled effect is proven/i)).toHaveCount(0);
  await expect.poll(() => countsAgree(page)).toBe("agree");

  // A member who holds nothing; resolved ones of mine; unknown outcomes have no due time.
  await page.goto(`/reconciliations?owner=${member.id}`);
  await expect(unknownsEmpty(page)).toContainText(`Nothing assigned to ${member.name}`);
  await page.goto("/reconciliations?status=resolved&owner=me");
  await expect(unknownsEmpty(page)).toContainText("No resolved unknown outcomes assigned to you");
  await page.goto("/reconciliations?age=overdue");
  await expect(unknownsEmpty(page)).toContainText("Unknown outcomes have no due time");
  await expect(page.getByText(/every settled effect is proven/i)).toHaveCount(0);

  // The unfiltered list: the provider with a job page links it, filled with this job's id; the other does not.
  await page.goto("/reconciliations");
  await expect(unknownsEmpty(page)).toHaveCount(0);
  const jobPage = `${e2e.simUrl}/jobs/${encodeURIComponent(jobId)}`;
  await expect(row(page, linked.id).locator("a[data-provider-job]")).toHaveAttribute("href", jobPage);
  await expect(row(page, unlinked.id)).toContainText(plain);
  await expect(row(page, unlinked.id).locator("a[data-provider-job]")).toHaveCount(0);
  const answered = await fetch(jobPage);
  expect(answered.status).toBe(200);
  expect(((await answered.json()) as { jobId?: string }).jobId).toBe(jobId);

  // Assigning answers in a toast; the row and the database follow.
  await row(page, linked.id).getByLabel("Assign to").selectOption(manager.id);
  await row(page, linked.id).getByRole("button", { name: "Assign" }).click();
  const toast = page.getByRole("status").filter({ hasText: "Assigned" });
  await expect(toast).toContainText(`Assigned deploy.apply`);
  await expect(toast).toContainText(`to ${manager.name} (${manager.email})`);
  await expect(row(page, linked.id)).toContainText(manager.email);
  expect((await one<{ a: string }>("SELECT assignee_user_id AS a FROM reconciliations WHERE id = $1", [linked.id])).a).toBe(manager.id);
  await expect.poll(() => countsAgree(page)).toBe("agree");

  // Mine now, but not older than 1 h.
  await page.goto("/reconciliations?owner=me&age=1h");
  await expect(unknownsEmpty(page)).toContainText("Nothing assigned to you older than 1 h");
  await expect(unknownsEmpty(page)).toContainText("Yours: 1 unknown outcome, all newer than 1 h.");

  // "Record the outcome" without a job page says so and links nothing.
  await page.goto("/reconciliations");
  await row(page, unlinked.id).getByRole("button", { name: "Record outcome…" }).click();
  const dialog = page.getByRole("dialog", { name: "Record the outcome" });
  await expect(dialog).toContainText("has no job page to link");
  await expect(dialog.locator("a[data-provider-job]")).toHaveCount(0);
  await dialog.getByRole("button", { name: "Cancel" }).click();
  await expect(dialog).toBeHidden();

  // With one, it links the job; recording answers in a toast and the item leaves the open list.
  await page.goto("/reconciliations?owner=me");
  await row(page, linked.id).getByRole("button", { name: "Record outcome…" }).click();
  await expect(dialog.locator("a[data-provider-job]")).toHaveAttribute("href", jobPage);
  await expect(dialog).toContainText("Open the job on the provider");
  await dialog.getByLabel(/Effect absent/).check();
  await dialog.getByLabel(/Evidence/).fill(`sim job ${jobId} shows no deployment`);
  await dialog.getByRole("button", { name: "Record and re-issue receipt" }).click();
  await expect(dialog).toBeHidden();
  await expect(page.getByRole("status").filter({ hasText: "Recorded" })).toContainText("Recorded effect absent for deploy.apply");
  await expect(row(page, linked.id)).toHaveCount(0);
  expect((await one<{ s: string }>("SELECT status::text AS s FROM reconciliations WHERE id = $1", [linked.id])).s).toBe("resolved");
  await expect(unknownsEmpty(page)).toContainText("Nothing assigned to you");
  await expect.poll(() => countsAgree(page)).toBe("agree");
});
