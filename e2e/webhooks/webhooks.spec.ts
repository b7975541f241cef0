// An admin adds a webhook endpoint in the console (the secret is shown once); a kill reaches the
// receiver as signed CloudEvents; while the receiver is down a pause becomes a dead letter, shown on
// the page, and the Retry button delivers it once the receiver is back.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { expect, test } from "@playwright/test";
import { signIn } from "../support/session";
import { e2e, USERS } from "../support/env";
import { closeDb } from "../support/db";
import { liveRun } from "../support/live-run";
import { killViaApi } from "../support/kill";
import { verifyWebhookSignature, type CloudEvent } from "../../lib/modules/webhooks/events";

test.afterAll(closeDb);

const got: { event: CloudEvent; signed: boolean }[] = [];
let secret = "";
let port = 0;
let server: http.Server | null = null;
async function up() {
  server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (d) => {
      body += d;
    });
    req.on("end", () => {
      got.push({
        event: JSON.parse(body) as CloudEvent,
        signed: verifyWebhookSignature(secret, body, (req.headers["quiesce-signature"] as string) ?? null, Math.floor(Date.now() / 1000)),
      });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => server!.listen(port, "127.0.0.1", r));
  port = (server.address() as AddressInfo).port;
}
async function down() {
  const s = server!;
  s.closeAllConnections();
  await new Promise((r) => s.close(r));
}

test("an admin adds a webhook, events arrive signed, a dead letter is retried from the console", async ({ page }) => {
  await up();
  await signIn(page, USERS.admin);
  await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Webhooks" }).click();
  await page.waitForURL(/\/webhooks/);
  await page.getByLabel("URL (http or https)").fill(`http://127.0.0.1:${port}/hook`);
  await page.getByRole("button", { name: "Add endpoint" }).click();
  secret = (await page.getByTestId("new-webhook-secret").textContent())!.trim();
  expect(secret).toMatch(/^whsec_/);
  await page.getByRole("button", { name: "Done" }).click();
  await expect(page.locator("tr", { hasText: `127.0.0.1:${port}` })).toBeVisible();

  const { run } = await liveRun("Webhook journey");
  const barrierId = await killViaApi(run.runId, "webhook e2e");
  await expect
    .poll(() => got.filter((g) => g.event.subject === run.runId || g.event.data.run_id === run.runId).map((g) => g.event.type), {
      timeout: 30_000,
    })
    .toEqual(expect.arrayContaining(["dev.quiesce.run.killed", "dev.quiesce.barrier.dispatch_stopped"]));
  expect(got.every((g) => g.signed)).toBe(true);
  expect(got.find((g) => g.event.type === "dev.quiesce.run.killed")!.event.data).toMatchObject({ barrier_id: barrierId });

  // Receiver down: a pause on another run uses its three attempts and becomes a dead letter.
  await down();
  const other = await e2e
    .agent()
    .createRun({ taskId: `wh-${Date.now()}`, title: "paused while the receiver is down", harness: "claude_code" });
  const res = await fetch(`${e2e.baseUrl}/api/v1/runs/${other.runId}/pause`, {
    method: "POST",
    headers: { authorization: `Bearer ${e2e.keys().operator!.secret}`, "content-type": "application/json" },
    body: JSON.stringify({ reason: "look" }),
  });
  expect(res.status).toBe(200);
  await expect
    .poll(
      async () => {
        await page.reload();
        return page.getByTestId("dead-letters").locator("tr", { hasText: other.runId }).count();
      },
      { timeout: 30_000 },
    )
    .toBe(1);
  const row = page.getByTestId("dead-letters").locator("tr", { hasText: other.runId });
  await expect(row).toContainText("run.paused");
  await up();
  await row.getByRole("button", { name: "Retry" }).click();
  await expect
    .poll(() => got.filter((g) => g.event.type === "dev.quiesce.run.paused" && g.event.data.run_id === other.runId).length, {
      timeout: 30_000,
    })
    .toBe(1);
  await page.reload();
  await expect(page.getByTestId("dead-letters").locator("tr", { hasText: other.runId })).toHaveCount(0);
  await down();
});
