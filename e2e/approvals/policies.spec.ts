// Policies (docs/approvals-console.md#policies): an admin saves a version from the JSON editor (a bad document
// shows the server's message and saves nothing), dry-runs it (the same figures the API gives), enables it with a
// reason, and the budgets' spend shows live; an operator reads the same page with no way to change it.
import { expect, test } from "@playwright/test";
import { signIn } from "../support/session";
import { USERS } from "../support/env";
import { uid } from "../support/api";
import { closeDb, one } from "../support/db";
import { adminApi, ask, disablePolicy, runTree } from "../support/policy";
import { expectNoAxeViolations } from "../support/axe";

test.afterAll(async () => {
  await disablePolicy("e2e: policies journey done");
  await closeDb();
});

const versions = async () => Number((await one<{ n: string }>("SELECT count(*)::text AS n FROM policy_versions")).n);

test("an admin saves, dry-runs and enables a version; an operator reads it", async ({ page, browser }) => {
  test.setTimeout(120_000);
  // Something for the dry run to replay: a call the gate allowed today.
  const { child } = await runTree("policies journey");
  expect(await ask(child, uid("op"), "e2e.policies.drop_cache")).toMatchObject({ decision: "allow" });

  await signIn(page, USERS.admin);
  await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Policies" }).click();
  await expect(page.getByRole("heading", { level: 1, name: "Policies" })).toBeVisible();
  const editor = page.getByLabel("Policy document (JSON)");
  const save = page.getByRole("button", { name: "Save as a new version" });

  // Bad input: the server's message next to the editor, nothing saved.
  const before = await versions();
  await editor.fill("{ not json");
  await save.click();
  await expect(page.locator('[data-section="editor"]').getByRole("alert")).toContainText("document: not JSON");
  await editor.fill(JSON.stringify({ rules: [{ name: "spend", effect: "budget", budget: { unit: "calls", limit: -1 } }] }));
  await save.click();
  await expect(page.locator('[data-section="editor"]').getByRole("alert")).toContainText("rules.0.budget.limit");
  expect(await versions()).toBe(before);

  const doc = {
    rules: [
      { name: "e2e-policies-drop", tool: "e2e.policies.drop_*", effect: "deny" },
      { name: "e2e-policies-ask", tool: "e2e.policies.deploy", effect: "require_approval", approval: { ttlSeconds: 300, role: "manager" } },
      { name: "e2e-policies-calls", tool: "e2e.policies.*", effect: "budget", budget: { unit: "calls", limit: 50 } },
    ],
    redactKeys: ["token"],
    note: "e2e policies journey",
  };
  await editor.fill(JSON.stringify(doc, null, 2));
  await save.click();
  const saved = page.getByText(/Saved version \d+\. Dry-run it, then enable it\./);
  await expect(saved).toBeVisible();
  const version = Number(/Saved version (\d+)/.exec((await saved.textContent())!)![1]);
  expect(await versions()).toBe(before + 1);

  const item = page.locator(`[data-version="${version}"]`);
  await expect(item.locator("[data-diff]")).toContainText("e2e-policies-drop");
  await expect(item.locator("[data-added]")).toContainText("e2e-policies-calls");

  // Dry run: the figures the API gives for the same version and window.
  const dry = item.getByRole("form", { name: `Dry run version ${version}` });
  await dry.getByLabel("Days").fill("1");
  await dry.getByRole("button", { name: "Dry run" }).click();
  const api = await adminApi<{ wouldHold: number; wouldDeny: number; wouldDenyBudget: number }>(
    "POST",
    `/api/v1/policy/versions/${version}/dry-run`,
    { days: 1 },
  );
  expect(api.wouldDeny).toBeGreaterThanOrEqual(1);
  await expect(dry.locator("[data-dry-run]")).toHaveText(
    `would have held ${api.wouldHold} calls, denied ${api.wouldDeny}, budget-denied ${api.wouldDenyBudget}`,
  );

  // Enable, with a reason, through the confirmation dialog.
  await item.getByRole("button", { name: "Enable…" }).click();
  const dialog = page.getByRole("dialog", { name: `Enable version ${version}` });
  await dialog.getByLabel(/Reason/).fill("e2e: rolling out the deploy rule");
  await dialog.getByRole("button", { name: `Enable version ${version}` }).click();
  await expect(page.getByRole("heading", { name: `Enabled: version ${version}` })).toBeVisible();
  expect(await one("SELECT policy_version FROM teams WHERE slug = 'demo'")).toEqual({ policy_version: version });
  const audit = await one<{ after: { reason: string; version: number } }>(
    "SELECT after FROM audit_events WHERE action = 'policy.enable' ORDER BY id DESC LIMIT 1",
  );
  expect(audit.after).toMatchObject({ version, reason: "e2e: rolling out the deploy rule" });
  const enabled = page.locator('[data-section="enabled"]');
  await expect(enabled).toContainText("hold until a manager or admin approves, within 5 min");
  await expect(enabled.locator('[data-rule="e2e-policies-drop"]')).toContainText("deny");

  // Spend shows live: one call counted against the budget appears without a reload.
  expect(await ask(child, uid("op"), "e2e.policies.read")).toMatchObject({ decision: "allow" });
  await expect(page.locator('[data-budget="e2e-policies-calls"] [data-used]')).toHaveText("1 calls");
  await expectNoAxeViolations(page);

  // An operator reads the same policy and cannot change it.
  const ctx = await browser.newContext();
  const operator = await ctx.newPage();
  await signIn(operator, USERS.operator);
  await operator.goto("/policies");
  await expect(operator.getByRole("heading", { name: `Enabled: version ${version}` })).toBeVisible();
  await expect(operator.locator('[data-section="enabled"]')).toContainText("e2e-policies-ask");
  await expect(operator.getByText("Only admins change it; you can read it.")).toBeVisible();
  await expect(operator.getByLabel("Policy document (JSON)")).toHaveCount(0);
  await expect(operator.getByRole("button", { name: /Enable|Dry run|Turn off|Save/ })).toHaveCount(0);
  await ctx.close();
});
