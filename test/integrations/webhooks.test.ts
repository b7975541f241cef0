// Webhooks against a real local receiver and the real `quiesce webhook-worker` process: CloudEvents
// written in the control writes' own transactions, HMAC-signed, delivered at least once, in order per
// run, through a receiver outage (connection refused, then 503s); dead letters and their retry; URL rules.
//
// The outage is time-compressed: the retry schedule is injected (QUIESCE_WEBHOOK_RETRY_*), and the
// outage lasts WEBHOOK_OUTAGE_MS (default 8 s). WEBHOOK_OUTAGE_MS=120000 runs the full two minutes
// with the same schedule (the backoff caps at 2 s here, so the worker keeps trying through it).
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { prisma } from "../../lib/platform/db/prisma";
import { closePool } from "../../lib/platform/db/pool";
import { killRun } from "../../lib/modules/stop/kill";
import { pauseRun, resumeRun } from "../../lib/modules/runs/lifecycle";
import { setBreaker } from "../../lib/modules/gate/breaker";
import { issueReceiptTx, lockBarrierTx } from "../../lib/modules/stop/internal/receipts";
import { createWebhookEndpoint, listWebhookDeliveries, retryWebhookDelivery } from "../../lib/modules/webhooks/webhooks";
import { DELIVERY_FAILED, deliverDueOnce } from "../../lib/modules/webhooks/worker";
import { SIGNATURE_HEADER, verifyWebhookSignature, type CloudEvent } from "../../lib/modules/webhooks/events";
import { QuiesceError } from "../../lib/platform/errors";
import { addOp, makeTeam, makeTree, spawnCli, waitFor, type Proc, type TeamFixture } from "../barrier/fixtures";

const OUTAGE_MS = Number(process.env.WEBHOOK_OUTAGE_MS ?? 8_000);

interface Received {
  event: CloudEvent;
  signatureOk: boolean;
  contentType: string | undefined;
  webhookId: string | undefined;
}

/** A receiver that can go down (port closed) and come back on the same port, or answer 503. */
class Receiver {
  received: Received[] = [];
  failWith: number | null = null;
  private server: http.Server | null = null;
  port = 0;
  constructor(private secret: () => string) {}
  async up(): Promise<void> {
    this.server = http.createServer((req, res) => {
      let body = "";
      req.on("data", (d) => {
        body += d;
      });
      req.on("end", () => {
        if (this.failWith) {
          res.writeHead(this.failWith).end();
          return;
        }
        this.received.push({
          event: JSON.parse(body) as CloudEvent,
          contentType: req.headers["content-type"],
          webhookId: req.headers["webhook-id"] as string | undefined,
          signatureOk: verifyWebhookSignature(
            this.secret(),
            body,
            (req.headers[SIGNATURE_HEADER] as string) ?? null,
            Math.floor(Date.now() / 1000),
          ),
        });
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((r) => this.server!.listen(this.port, "127.0.0.1", r));
    this.port = (this.server.address() as AddressInfo).port;
  }
  async down(): Promise<void> {
    const s = this.server;
    this.server = null;
    if (!s) return;
    s.closeAllConnections();
    await new Promise<void>((r) => s.close(() => r()));
  }
  get url() {
    return `http://127.0.0.1:${this.port}/hooks/quiesce`;
  }
}

let team: TeamFixture;
let secret = "";
const receiver = new Receiver(() => secret);
let worker: Proc;

beforeAll(async () => {
  team = await makeTeam();
  await receiver.up();
  const e = await createWebhookEndpoint(team.users.admin.principal, { url: receiver.url, eventTypes: ["*"] });
  secret = e.secret;
  worker = spawnCli(["webhook-worker", "--team", team.teamId, "--quiet"], {
    QUIESCE_WEBHOOK_RETRY_BASE_MS: "100",
    QUIESCE_WEBHOOK_RETRY_MAX_MS: "2000",
    QUIESCE_WEBHOOK_MAX_ATTEMPTS: "1000",
    QUIESCE_WEBHOOK_POLL_MS: "100",
    QUIESCE_WEBHOOK_TIMEOUT_MS: "2000",
  });
}, 60_000);

afterAll(async () => {
  await worker?.stop();
  await receiver.down();
  await prisma().$disconnect();
  await closePool();
});

/** Every kind of control write for one run: pause/resume twice, breaker trip/reset, kill, two receipt versions. */
async function lifeOf(runId: string): Promise<void> {
  const op = team.users.operator.principal;
  await pauseRun(op, runId, "look");
  await resumeRun(op, runId, "fine");
  await setBreaker(op, runId, "trip", "flapping");
  await setBreaker(op, runId, "reset", "calm");
  await pauseRun(op, runId, "again");
  const { barrierId } = await killRun(op, runId, "stop it");
  for (let i = 0; i < 2; i++)
    await prisma().$transaction(async (tx) => {
      await lockBarrierTx(tx, barrierId);
      await issueReceiptTx(tx, barrierId);
    });
}
const EXPECTED_TYPES = [
  "run.paused",
  "run.resumed",
  "breaker.opened",
  "breaker.closed",
  "run.paused",
  "run.killed",
  "barrier.dispatch_stopped",
  "barrier.complete",
  "receipt.issued",
  "receipt.issued",
].map((t) => `dev.quiesce.${t}`);

describe("webhooks", () => {
  test(
    "every event arrives after a receiver outage, signed, in order per run, nothing lost",
    async () => {
      // Before the outage: delivered straight away.
      const first = (await makeTree(team.teamId)).root.runId;
      await lifeOf(first);
      await waitFor(
        "the first run's events",
        async () =>
          receiver.received.filter((r) => r.event.subject === first || r.event.data.run_id === first).length >= EXPECTED_TYPES.length,
        30_000,
        100,
      );

      // Outage: the port is closed for the first half, then the receiver answers 503 for the second.
      await receiver.down();
      const outageStart = Date.now();
      const runs = await Promise.all([0, 1, 2].map(async () => (await makeTree(team.teamId)).root.runId));
      await Promise.all(runs.map(lifeOf));
      await new Promise((r) => setTimeout(r, Math.max(0, OUTAGE_MS / 2 - (Date.now() - outageStart))));
      receiver.failWith = 503;
      await receiver.up();
      await new Promise((r) => setTimeout(r, Math.max(0, OUTAGE_MS - (Date.now() - outageStart))));
      // Nothing got through, and nothing was given up on.
      const during = await prisma().webhookDelivery.groupBy({
        by: ["status"],
        where: { teamId: team.teamId, orderingKey: { in: runs } },
        _count: true,
      });
      expect(during).toEqual([{ status: "pending", _count: runs.length * EXPECTED_TYPES.length }]);
      const attempted = await prisma().webhookDelivery.count({
        where: { teamId: team.teamId, orderingKey: { in: runs }, attempts: { gt: 1 } },
      });
      expect(attempted).toBeGreaterThan(0);
      receiver.failWith = null;

      await waitFor(
        "every event after the outage",
        async () => (await prisma().webhookDelivery.count({ where: { teamId: team.teamId, status: { not: "delivered" } } })) === 0,
        60_000,
        200,
      );
      if (worker.child.exitCode !== null) throw new Error(worker.output());

      const rows = await prisma().webhookDelivery.findMany({ where: { teamId: team.teamId }, orderBy: { id: "asc" } });
      expect(rows).toHaveLength(4 * EXPECTED_TYPES.length);
      // At least once: every outbox event id arrived (duplicates are allowed; receivers de-duplicate on the id).
      const firstSeen = new Map<string, number>();
      receiver.received.forEach((r, i) => {
        if (!firstSeen.has(r.event.id)) firstSeen.set(r.event.id, i);
      });
      expect(new Set(rows.map((r) => r.eventId))).toEqual(new Set(firstSeen.keys()));
      for (const runId of [first, ...runs]) {
        const outboxOrder = rows.filter((r) => r.orderingKey === runId).map((r) => r.eventId);
        const arrival = [...outboxOrder].sort((a, b) => firstSeen.get(a)! - firstSeen.get(b)!);
        expect(arrival).toEqual(outboxOrder);
        expect(outboxOrder.map((id) => receiver.received[firstSeen.get(id)!]!.event.type)).toEqual(EXPECTED_TYPES);
      }
      for (const r of receiver.received) {
        expect(r.signatureOk).toBe(true);
        expect(r.contentType).toMatch(/^application\/cloudevents\+json/);
        expect(r.webhookId).toBe(r.event.id);
        expect(r.event).toMatchObject({ specversion: "1.0", source: `/quiesce/teams/${team.teamId}`, datacontenttype: "application/json" });
        expect(Number.isNaN(Date.parse(r.event.time))).toBe(false);
      }
      const receipt = receiver.received.find((r) => r.event.type === "dev.quiesce.receipt.issued")!.event;
      expect(receipt.data).toMatchObject({
        version: 1,
        digest: expect.stringMatching(/^[0-9a-f]{64}$/),
        key_id: expect.stringMatching(/^ed25519:/),
      });
    },
    Math.max(180_000, OUTAGE_MS * 3),
  );

  test("a control write that rolls back leaves no event", async () => {
    const runId = (await makeTree(team.teamId)).root.runId;
    await killRun(team.users.operator.principal, runId, "first");
    const before = await prisma().webhookDelivery.count({ where: { orderingKey: runId } });
    // Resuming a killed run is refused (409) inside the transaction: nothing is written.
    await expect(resumeRun(team.users.operator.principal, runId, "no")).rejects.toThrow(QuiesceError);
    expect(await prisma().webhookDelivery.count({ where: { orderingKey: runId } })).toBe(before);
    expect(before).toBe(2);
  });

  test("dead letters after the last attempt; the retry puts them back and they arrive", async () => {
    const other = await makeTeam();
    const down = new Receiver(() => otherSecret);
    let otherSecret = "";
    await down.up();
    const url = down.url;
    await down.down();
    otherSecret = (await createWebhookEndpoint(other.users.admin.principal, { url, eventTypes: ["run.paused"] })).secret;
    const runId = (await makeTree(other.teamId)).root.runId;
    await pauseRun(other.users.operator.principal, runId, "x");
    await resumeRun(other.users.operator.principal, runId, "y"); // not subscribed: no row
    const opts = { teamId: other.teamId, maxAttempts: 2, retryBaseMs: 1, retryMaxMs: 1, timeoutMs: 1000 };
    await waitFor(
      "dead letter",
      async () => {
        await deliverDueOnce(opts);
        return (await listWebhookDeliveries(other.users.admin.principal, "dead")).length === 1;
      },
      20_000,
      50,
    );
    const [dead] = await listWebhookDeliveries(other.users.admin.principal, "dead");
    expect(dead).toMatchObject({ type: "run.paused", runId, attempts: 2, lastError: DELIVERY_FAILED });
    // Only an admin of that team manages it.
    await expect(retryWebhookDelivery(other.users.operator.principal, dead!.id)).rejects.toThrow(/not allowed/);
    await expect(retryWebhookDelivery(team.users.admin.principal, dead!.id)).rejects.toThrow(/not found/);
    await down.up();
    await retryWebhookDelivery(other.users.admin.principal, dead!.id);
    await waitFor(
      "redelivery",
      async () => {
        await deliverDueOnce(opts);
        return down.received.length === 1;
      },
      20_000,
      50,
    );
    expect(down.received[0]!.event.id).toBe(dead!.eventId);
    expect(down.received[0]!.signatureOk).toBe(true);
    expect(await listWebhookDeliveries(other.users.admin.principal, "dead")).toEqual([]);
    await down.down();
  });

  test("endpoints that are not http(s), carry credentials or point at the deployment itself are refused; nothing is written", async () => {
    const admin = team.users.admin.principal;
    const count = () => prisma().webhookEndpoint.count({ where: { teamId: team.teamId } });
    const n = await count();
    const saved = process.env.QUIESCE_PUBLIC_URL;
    process.env.QUIESCE_PUBLIC_URL = "https://quiesce.example.com";
    try {
      for (const [url, why] of [
        ["ftp://example.com/x", /url: only http and https/],
        ["file:///etc/passwd", /url: only http and https/],
        ["javascript:alert(1)", /url: only http and https/],
        ["not a url", /url: not a URL/],
        ["https://user:pw@example.com/", /url: credentials/],
        ["https://quiesce.example.com/api/v1/runs", /url: .*this deployment itself/],
        ["https://QUIESCE.example.com:443/x", /url: .*this deployment itself/],
      ] as const) {
        await expect(createWebhookEndpoint(admin, { url, eventTypes: ["run.killed"] }), url).rejects.toThrow(why);
      }
      await expect(createWebhookEndpoint(admin, { url: "https://hooks.example.com/", eventTypes: ["run.exploded"] })).rejects.toThrow(
        /eventTypes\.0/,
      );
      await expect(
        createWebhookEndpoint(team.users.manager.principal, { url: "https://hooks.example.com/", eventTypes: ["run.killed"] }),
      ).rejects.toThrow(/not allowed/);
    } finally {
      if (saved === undefined) delete process.env.QUIESCE_PUBLIC_URL;
      else process.env.QUIESCE_PUBLIC_URL = saved;
    }
    expect(await count()).toBe(n);
  });
});

test("an unknown outcome's automatic owner is announced as reconciliation.assigned in the same transaction", async () => {
  const t = await makeTeam();
  await createWebhookEndpoint(t.users.admin.principal, { url: "https://hooks.example.com/x", eventTypes: ["reconciliation.assigned"] });
  const { root } = await makeTree(t.teamId);
  const op = await addOp(t.teamId, root, { state: "running", operationId: "op-unknown-owner" });
  await prisma().operation.update({ where: { id: op.rowId }, data: { state: "aborted_unknown" } });
  const rows = await prisma().webhookDelivery.findMany({ where: { teamId: t.teamId } });
  expect(rows).toHaveLength(1);
  const rec = await prisma().reconciliation.findUniqueOrThrow({ where: { operationId: op.rowId } });
  expect(rows[0]!.event).toMatchObject({
    specversion: "1.0",
    id: rows[0]!.eventId,
    type: "dev.quiesce.reconciliation.assigned",
    subject: rec.id,
    source: `/quiesce/teams/${t.teamId}`,
    datacontenttype: "application/json",
    data: {
      run_id: root.runId,
      reconciliation_id: rec.id,
      operation_id: "op-unknown-owner",
      assignee_user_id: t.users.admin.id,
      by: "system:default-owner (team admin)",
    },
  });
  expect(Number.isNaN(Date.parse((rows[0]!.event as { time: string }).time))).toBe(false);
});

test("the CLI manages endpoints: add prints the secret once, list, rotate-secret, dead, remove; bad input exits 2", async () => {
  const { runCli } = await import("../cli/run-cli");
  const t = await makeTeam();
  const { slug } = await prisma().team.findUniqueOrThrow({ where: { id: t.teamId }, select: { slug: true } });
  const add = await runCli([
    "webhooks",
    "add",
    "--team",
    slug,
    "--url",
    "https://hooks.example.com/q",
    "--events",
    "run.killed,receipt.issued",
  ]);
  expect(add.code, add.stderr).toBe(0);
  expect(add.stdout.trim()).toMatch(/^whsec_[A-Za-z0-9_-]{32}$/);
  const list = await runCli(["webhooks", "list", "--team", slug, "--json"]);
  const [e] = JSON.parse(list.stdout) as { id: string; url: string; eventTypes: string[] }[];
  expect(e).toMatchObject({ url: "https://hooks.example.com/q", eventTypes: ["run.killed", "receipt.issued"] });
  expect(list.stdout).not.toContain(add.stdout.trim());
  const rot = await runCli(["webhooks", "rotate-secret", e!.id]);
  expect(rot.code, rot.stderr).toBe(0);
  const row = await prisma().webhookEndpoint.findUniqueOrThrow({ where: { id: e!.id } });
  expect(row.secret).toBe(rot.stdout.trim());
  expect(row.secret).not.toBe(add.stdout.trim());
  expect((await runCli(["webhooks", "dead", "--team", slug])).stdout).toContain("no dead letters");
  const bad = await runCli(["webhooks", "add", "--team", slug, "--url", "file:///etc/passwd", "--events", "run.killed"]);
  expect(bad.code).toBe(2);
  expect(bad.stderr).toContain("url: only http and https");
  const badType = await runCli(["webhooks", "add", "--team", slug, "--url", "https://x.example.com", "--events", "run.exploded"]);
  expect(badType.code).toBe(2);
  expect(await prisma().webhookEndpoint.count({ where: { teamId: t.teamId } })).toBe(1);
  expect((await runCli(["webhooks", "remove", e!.id])).code).toBe(0);
  expect(await prisma().webhookEndpoint.count({ where: { teamId: t.teamId } })).toBe(0);
}, 120_000);
