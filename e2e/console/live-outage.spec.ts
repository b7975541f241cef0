// The Live badge is honest when the console API fails behind a stream that stays open, and an outage
// does not flood the browser's console (docs/console.md#live-updates): "Reconnecting…" within 10 s of
// the JSON API answering 503, at most one failed request (one console error) per poll interval while
// every console request is refused, and Live again once the server answers.
import { expect, test } from "@playwright/test";
import { signIn } from "../support/session";
import { USERS } from "../support/env";
import { collectErrors, liveBadge as badge } from "../support/console-errors";

const POLL_SECONDS = 5;

test("the badge reads Reconnecting… within 10 s of the API failing, one console error per poll at most, then Live again", async ({
  page,
}) => {
  test.setTimeout(120_000);
  await signIn(page, USERS.viewer);
  await page.goto("/runs");
  await expect(badge(page)).toHaveText("Live");
  await expect(page.getByRole("table").first()).toBeVisible();
  const errors = collectErrors(page);

  // The JSON endpoints fail; the event stream (already open, rotated by the server) keeps working.
  const json = /\/api\/console\/(?!events)/;
  await page.route(json, (route) =>
    route.fulfill({ status: 503, contentType: "application/json", body: '{"error":{"code":"unavailable","message":"down"}}' }),
  );
  const since = Date.now();
  await expect(badge(page)).toHaveText("Reconnecting…", { timeout: 10_000 });

  // Then every console request is refused, the stream's reconnections too.
  await page.route("**/api/console/**", (route) => route.abort("connectionrefused"));
  await page.waitForTimeout(30_000);
  await expect(badge(page)).toHaveText("Reconnecting…");
  const seconds = (Date.now() - since) / 1000;
  expect(errors.length, errors.join("\n")).toBeLessThanOrEqual(Math.ceil(seconds / POLL_SECONDS) + 2);
  expect(
    errors.every((e) => /Failed to load resource/.test(e)),
    errors.join("\n"),
  ).toBe(true);
  // The page says the data is the last copy received, not that the list is empty.
  await expect(page.getByText(/Live refresh failing/)).toBeVisible();

  await page.unrouteAll();
  await expect(badge(page)).toHaveText("Live", { timeout: 15_000 });
  await expect(page.getByText(/Live refresh failing/)).toHaveCount(0, { timeout: 15_000 });
  const after = errors.length;
  await page.waitForTimeout(2 * POLL_SECONDS * 1000);
  expect(errors.length).toBe(after);
});
