// End-to-end tests in a real browser (Debian's Chromium) against a real production build of the
// console, a real PostgreSQL database, the barrier engine and the simulated provider — all started
// by e2e/global-setup.ts. Run with `npm run test:e2e` (also the last step of `npm test`).
import { defineConfig } from "@playwright/test";
import { setting } from "./lib/platform/config";

export const E2E_PORT = setting("QUIESCE_E2E_PORT");

export default defineConfig({
  testDir: "e2e",
  testMatch: "**/*.spec.ts",
  globalSetup: "./e2e/global-setup.ts",
  // One server, two cores: run the journeys one after another.
  workers: 1,
  fullyParallel: false,
  forbidOnly: Boolean(process.env.CI),
  retries: 0,
  timeout: 90_000,
  expect: { timeout: 20_000 },
  reporter: "list",
  outputDir: "test-results/e2e",
  use: {
    baseURL: `http://127.0.0.1:${E2E_PORT}`,
    browserName: "chromium",
    headless: true,
    viewport: { width: 1440, height: 900 },
    trace: "retain-on-failure",
    screenshot: "only-on-failure",
    launchOptions: {
      executablePath: setting("CHROMIUM_PATH"),
      args: [
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
      ],
    },
  },
});
