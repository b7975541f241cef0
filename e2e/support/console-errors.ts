// What the console journeys watch in the browser: every page error and console error, and the Live badge.
import type { Page } from "@playwright/test";

/** Every page error and console error from now on, as lines naming the page (a React #418 is one). */
export function collectErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on("pageerror", (e) => errors.push(`pageerror at ${page.url()}: ${e.message}`));
  page.on("console", (m) => {
    if (m.type() === "error") errors.push(`console.error at ${page.url()}: ${m.text()}`);
  });
  return errors;
}

/** The header's Live badge (the console's event stream). */
export const liveBadge = (page: Page) => page.getByRole("status", { name: "Live updates from the control plane" });
