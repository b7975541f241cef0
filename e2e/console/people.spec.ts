// The People page in the browser, against the production build: a team admin disables a person's
// membership in this team (they keep their other team), and cannot disable a person everywhere who
// also belongs to a team that admin does not administer — the page says why and nothing changes.
import { randomBytes } from "node:crypto";
import { expect, test } from "@playwright/test";
import { signIn } from "../support/session";
import { e2e, USERS } from "../support/env";
import { closeDb, db, one } from "../support/db";

test.afterAll(async () => {
  await closeDb();
});

/** A new user with the demo password: a viewer of team demo and of team other. */
async function memberOfBoth(): Promise<{ id: string; email: string }> {
  const id = `user_people${randomBytes(6).toString("hex")}`;
  const email = `people.${id.slice(11)}@example.test`;
  const d = await db();
  await d.query(
    "INSERT INTO users (id, email, name, password_hash) SELECT $1, $2, 'Both teams', password_hash FROM users WHERE email = $3",
    [id, email, USERS.viewer],
  );
  for (const slug of ["demo", "other"])
    await d.query(`INSERT INTO memberships (id, team_id, user_id, role) SELECT $1, id, $2, 'viewer' FROM teams WHERE slug = $3`, [
      `mem_people${randomBytes(6).toString("hex")}`,
      id,
      slug,
    ]);
  return { id, email };
}

test("disable in team takes this team only; disable everywhere is refused for a person of another team", async ({ page, browser }) => {
  const x = await memberOfBoth();
  await signIn(page, USERS.admin);
  await page.goto("/people");
  const row = page.getByRole("row").filter({ hasText: x.email });
  await expect(row.getByRole("cell", { name: "active", exact: true })).toBeVisible();

  await row.getByRole("button", { name: "Disable everywhere" }).click();
  await expect(page.getByRole("alert").filter({ hasText: x.email })).toContainText(
    `${x.email} also belongs to teams you are not an admin of`,
  );
  expect((await one<{ disabled_at: Date | null }>("SELECT disabled_at FROM users WHERE id = $1", [x.id])).disabled_at).toBeNull();

  await row.getByRole("button", { name: "Disable in team" }).click();
  await expect(row.getByRole("cell", { name: "disabled in this team" })).toBeVisible();
  await expect(row.getByRole("button", { name: "Enable in team" })).toBeVisible();
  const teams = await one<{ active: string[]; disabled: string[] }>(
    `SELECT array(SELECT t.slug FROM memberships m JOIN teams t ON t.id = m.team_id WHERE m.user_id = $1) AS active,
            array(SELECT t.slug FROM disabled_memberships m JOIN teams t ON t.id = m.team_id WHERE m.user_id = $1) AS disabled`,
    [x.id],
  );
  expect(teams).toEqual({ active: ["other"], disabled: ["demo"] });

  // They sign in to the team they still have, and only to it.
  const ctx = await browser.newContext({ baseURL: e2e.baseUrl });
  const theirs = await ctx.newPage();
  await signIn(theirs, x.email);
  await expect(theirs.getByRole("banner")).toContainText("Other team");
  await expect(theirs.getByRole("banner")).not.toContainText("Demo team");
  await ctx.close();

  await row.getByRole("button", { name: "Enable in team" }).click();
  await expect(row.getByRole("cell", { name: "active", exact: true })).toBeVisible();
});
