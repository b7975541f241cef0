// Webhooks cannot be pointed inside the network: against real PostgreSQL, real local receivers, the real
// provider simulator and the real PostgreSQL port. Every address of the finding is refused when the
// endpoint is saved (400 naming `url`, nothing written); a name that resolves to a private address when
// the delivery connects is refused then, and the receiver gets nothing; the connection goes to the address
// that was judged; every failed delivery stores the same error; an allowed CIDR works.
//
// The suite allows 127.0.0.1/32 (test/setup-env.ts); each test sets QUIESCE_WEBHOOK_ALLOW_PRIVATE itself.
import http from "node:http";
import net, { type AddressInfo } from "node:net";
import { afterAll, beforeAll, expect, test } from "vitest";
import { prisma } from "../../lib/platform/db/prisma";
import { closePool } from "../../lib/platform/db/pool";
import { newId } from "../../lib/platform/ids";
import { pauseRun } from "../../lib/modules/runs/lifecycle";
import { createWebhookEndpoint } from "../../lib/modules/webhooks/webhooks";
import { DELIVERY_FAILED, deliverDueOnce } from "../../lib/modules/webhooks/worker";
import { SIGNATURE_HEADER, verifyWebhookSignature } from "../../lib/modules/webhooks/events";
import { startSimProvider, type SimServer } from "../../lib/modules/stop/providers/sim-server";
import { SimProviderClient } from "../../lib/modules/stop/providers/sim-client";
import type { ResolvedAddress } from "../../lib/platform/security/outbound";
import { QuiesceError } from "../../lib/platform/errors";
import { makeTeam, makeTree, spawnCli, waitFor, type TeamFixture } from "../barrier/fixtures";

/** Counts what reaches it; answers 204, or `status` (with a Location when redirecting). */
class Receiver {
  hits: { path: string; signed: boolean }[] = [];
  status = 204;
  location: string | null = null;
  secret = "";
  server!: http.Server;
  port = 0;
  async up(host = "127.0.0.1"): Promise<this> {
    this.server = http.createServer((req, res) => {
      let body = "";
      req.on("data", (d) => (body += d));
      req.on("end", () => {
        const sig = (req.headers[SIGNATURE_HEADER] as string) ?? null;
        this.hits.push({ path: req.url ?? "", signed: verifyWebhookSignature(this.secret, body, sig, Math.floor(Date.now() / 1000)) });
        res.writeHead(this.status, this.location ? { location: this.location } : {}).end();
      });
    });
    await new Promise<void>((r) => this.server.listen(0, host, r));
    this.port = (this.server.address() as AddressInfo).port;
    return this;
  }
  async down(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((r) => this.server.close(() => r()));
  }
}

/** A TCP server that is not HTTP: `banner` writes a line and hangs up, `silent` accepts and never answers. */
async function tcpServer(kind: "banner" | "silent"): Promise<net.Server & { port: number }> {
  const sockets = new Set<net.Socket>();
  const s = net.createServer((sock) => {
    sockets.add(sock);
    sock.on("error", () => {});
    if (kind === "banner") sock.end("SSH-2.0-OpenSSH_9.6\r\n");
  });
  s.on("close", () => sockets.forEach((x) => x.destroy()));
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
  const close = s.close.bind(s);
  return Object.assign(s, {
    port: (s.address() as AddressInfo).port,
    close: (cb?: (err?: Error) => void) => {
      sockets.forEach((x) => x.destroy());
      return close(cb);
    },
  });
}

/** A port on 127.0.0.1 with nothing listening (bound, then released). */
async function closedPort(host = "127.0.0.1"): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, host, r));
  const port = (s.address() as AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

async function withEnv<T>(vars: Record<string, string | undefined>, fn: () => Promise<T>): Promise<T> {
  const saved = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]));
  for (const [k, v] of Object.entries(vars)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  try {
    return await fn();
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}
const NOTHING_ALLOWED = { QUIESCE_WEBHOOK_ALLOW_PRIVATE: "" };
const LOOPBACK_ONE = { QUIESCE_WEBHOOK_ALLOW_PRIVATE: "127.0.0.1/32" };

/** An endpoint row as an older version (or a name that resolved elsewhere at save) left it: no save-time check. */
async function storedEndpoint(teamId: string, url: string, secret = "whsec_stored_endpoint_secret"): Promise<string> {
  const id = newId("whk");
  await prisma().webhookEndpoint.create({ data: { id, teamId, url, secret, eventTypes: ["run.paused"], createdBy: "system:test" } });
  return id;
}

/** One run.paused event for every endpoint of the team. */
async function pauseOne(team: TeamFixture): Promise<void> {
  const runId = (await makeTree(team.teamId)).root.runId;
  await pauseRun(team.users.operator.principal, runId, "ssrf test");
}

const deliveries = (teamId: string) =>
  prisma().webhookDelivery.findMany({ where: { teamId }, include: { endpoint: { select: { url: true } } }, orderBy: { id: "asc" } });

const once = (teamId: string, extra: Parameters<typeof deliverDueOnce>[0] = {}) =>
  deliverDueOnce({ teamId, maxAttempts: 10, retryBaseMs: 1, retryMaxMs: 1, timeoutMs: 1500, ...extra });

const dbPort = Number(new URL(process.env.DATABASE_URL!).port || 5432);
const dbIsLocal = ["127.0.0.1", "localhost"].includes(new URL(process.env.DATABASE_URL!).hostname);
let sim: SimServer;
const receiver = new Receiver();

beforeAll(async () => {
  sim = await startSimProvider({ port: 0, host: "127.0.0.1" });
  const client = new SimProviderClient(sim.url);
  for (let i = 0; i < 26; i++) await client.createJob({ jobId: `ssrf-${i}` });
  await receiver.up();
});

afterAll(async () => {
  await receiver.down();
  await sim.close();
  await prisma().$disconnect();
  await closePool();
});

test("every address of the finding is refused at save: a 400 naming url, nothing written", async () => {
  const team = await makeTeam();
  const admin = team.users.admin.principal;
  const selfPort = await closedPort();
  const urls = [
    "http://169.254.169.254/latest/meta-data/iam/security-credentials/",
    "http://10.0.0.1/",
    "http://[fd00::1]/",
    `http://127.0.0.1:${dbPort}/`,
    `${sim.url}/reset`,
    `http://[::ffff:127.0.0.1]:${selfPort}/`,
    `http://localhost.:${selfPort}/`,
    `http://[::]:${selfPort}/`,
    "http://0x7f.1/",
    "http://2130706433/",
    "http://127.1/",
    "http://localhost/",
    "http://0.0.0.0/",
    "http://100.64.0.1/",
    "http://172.16.5.4/",
    "http://192.168.0.1/",
    "http://[::ffff:10.0.0.1]/",
    "http://[::1]/",
    "http://[fe80::1]/",
    "http://224.0.0.1/",
    "http://255.255.255.255/",
  ];
  const before = {
    endpoints: await prisma().webhookEndpoint.count(),
    audit: await prisma().auditEvent.count({ where: { teamId: team.teamId } }),
  };
  await withEnv({ ...NOTHING_ALLOWED, PORT: String(selfPort) }, async () => {
    for (const url of urls) {
      const err = await createWebhookEndpoint(admin, { url, eventTypes: ["*"] }).then(
        () => null,
        (e: unknown) => e,
      );
      expect(err, url).toBeInstanceOf(QuiesceError);
      expect((err as QuiesceError).httpStatus, url).toBe(400);
      expect((err as QuiesceError).message, url).toMatch(/^url: /);
    }
  });
  expect(await prisma().webhookEndpoint.count()).toBe(before.endpoints);
  expect(await prisma().auditEvent.count({ where: { teamId: team.teamId } })).toBe(before.audit);
  expect(sim.jobs.size).toBe(26);
});

test("with loopback allowed, this deployment's own ports (web, provider simulator, database) stay refused however they are spelt", async () => {
  const team = await makeTeam();
  const admin = team.users.admin.principal;
  const selfPort = await closedPort();
  const env = {
    QUIESCE_WEBHOOK_ALLOW_PRIVATE: "127.0.0.0/8,::1/128,0.0.0.0/8,::/128",
    PORT: String(selfPort),
    QUIESCE_PROVIDER_SIM_URL: sim.url,
  };
  await withEnv(env, async () => {
    for (const url of [
      `http://127.0.0.1:${selfPort}/api/v1/runs`,
      `http://[::ffff:127.0.0.1]:${selfPort}/`,
      `http://localhost.:${selfPort}/`,
      `http://[::]:${selfPort}/`,
      `http://0.0.0.0:${selfPort}/`,
      `http://127.0.0.9:${selfPort}/`,
      `http://[::ffff:127.0.0.1]:${sim.port}/reset`,
      `${sim.url}/reset`,
      ...(dbIsLocal ? [`http://localhost:${dbPort}/`, `http://[::]:${dbPort}/`] : []),
    ])
      await expect(createWebhookEndpoint(admin, { url, eventTypes: ["*"] }), url).rejects.toThrow(
        /^url: the endpoint points at this deployment itself/,
      );
    // Another loopback port is not this deployment: the allowance is in force.
    await expect(createWebhookEndpoint(admin, { url: `http://127.0.0.1:${receiver.port}/`, eventTypes: ["*"] })).resolves.toMatchObject({
      url: `http://127.0.0.1:${receiver.port}/`,
    });
    // A row that points at the simulator's /reset anyway (saved before) is refused at delivery: its jobs stay.
    await storedEndpoint(team.teamId, `http://localhost:${sim.port}/reset`);
    await pauseOne(team);
    await once(team.teamId);
  });
  expect(sim.jobs.size).toBe(26);
  const rows = await deliveries(team.teamId);
  expect(rows.find((r) => r.endpoint.url.includes(`:${sim.port}/`))).toMatchObject({ status: "pending", lastError: DELIVERY_FAILED });
});

test("an allowed CIDR lets exactly its addresses through: 127.0.0.1/32 is saved and reached, 127.0.0.2 is not", async () => {
  const team = await makeTeam();
  const admin = team.users.admin.principal;
  const url = `http://127.0.0.1:${receiver.port}/allowed`;
  await withEnv(NOTHING_ALLOWED, () =>
    expect(createWebhookEndpoint(admin, { url, eventTypes: ["run.paused"] })).rejects.toThrow(/^url: .*loopback/),
  );
  await withEnv(LOOPBACK_ONE, async () => {
    await expect(createWebhookEndpoint(admin, { url: `http://127.0.0.2:${receiver.port}/`, eventTypes: ["run.paused"] })).rejects.toThrow(
      /^url: .*loopback/,
    );
    receiver.secret = (await createWebhookEndpoint(admin, { url, eventTypes: ["run.paused"] })).secret;
    await pauseOne(team);
    await once(team.teamId);
  });
  const [row] = await deliveries(team.teamId);
  expect(row).toMatchObject({ status: "delivered", lastError: null });
  expect(receiver.hits.filter((h) => h.path === "/allowed")).toEqual([{ path: "/allowed", signed: true }]);
});

test("a name that resolves to a private address when the delivery connects is refused then; the receiver gets nothing", async () => {
  const team = await makeTeam();
  const admin = team.users.admin.principal;
  const before = receiver.hits.length;
  // Saved while the name did not resolve (nothing to judge yet); now it resolves to loopback.
  const named = `http://hooks.rebind.test:${receiver.port}/named`;
  await withEnv(NOTHING_ALLOWED, () => createWebhookEndpoint(admin, { url: named, eventTypes: ["run.paused"] }));
  // And an old row naming localhost, resolved by the system's own rules.
  await storedEndpoint(team.teamId, `http://localhost:${receiver.port}/localhost`);
  await pauseOne(team);
  const lookup = async (): Promise<ResolvedAddress[]> => [{ address: "127.0.0.1", family: 4 }];
  await withEnv(NOTHING_ALLOWED, () => once(team.teamId, { lookup }));
  expect(receiver.hits.length).toBe(before);
  const rows = await deliveries(team.teamId);
  expect(rows.map((r) => [r.status, r.attempts, r.lastError])).toEqual([
    ["pending", 1, DELIVERY_FAILED],
    ["pending", 1, DELIVERY_FAILED],
  ]);
  // The same rows with 127.0.0.1 allowed do arrive (the name one; localhost is also ::1, still refused).
  await withEnv(LOOPBACK_ONE, () => once(team.teamId, { lookup }));
  expect(receiver.hits.slice(before).map((h) => h.path)).toEqual(["/named"]);
});

test("the connection goes to the address that was judged: a resolver that changes its answer cannot move it", async () => {
  const team = await makeTeam();
  const inside = await new Receiver().up("127.0.0.2");
  try {
    // Nothing listens on 127.0.0.1 at the inside receiver's port.
    await expect(
      new Promise((resolve, reject) => net.connect(inside.port, "127.0.0.1").on("connect", resolve).on("error", reject)),
    ).rejects.toMatchObject({ code: "ECONNREFUSED" });
    await storedEndpoint(team.teamId, `http://rebind.test:${inside.port}/`);
    await pauseOne(team);
    let calls = 0;
    const rebinding = async (): Promise<ResolvedAddress[]> => [{ address: calls++ === 0 ? "127.0.0.1" : "127.0.0.2", family: 4 }];
    await withEnv(LOOPBACK_ONE, () => once(team.teamId, { lookup: rebinding }));
    expect(inside.hits).toEqual([]);
    expect(calls).toBe(1);
    expect((await deliveries(team.teamId))[0]).toMatchObject({ status: "pending", attempts: 1, lastError: DELIVERY_FAILED });
    // With 127.0.0.2 allowed and resolved, the same row reaches it: the receiver is there to be reached.
    await withEnv({ QUIESCE_WEBHOOK_ALLOW_PRIVATE: "127.0.0.0/8" }, () =>
      once(team.teamId, { lookup: async () => [{ address: "127.0.0.2", family: 4 }] }),
    );
    expect(inside.hits).toHaveLength(1);
  } finally {
    await inside.down();
  }
});

test("every failed delivery stores the same error: refused address, closed port, non-HTTP ports, silence, TLS to plain HTTP", async () => {
  const team = await makeTeam();
  const banner = await tcpServer("banner");
  const silent = await tcpServer("silent");
  const inside = await new Receiver().up("127.0.0.2");
  try {
    const urls = [
      "http://10.0.0.1/",
      "http://169.254.169.254/latest/meta-data/",
      `http://[fd00::1]:${receiver.port}/`,
      `http://127.0.0.2:${inside.port}/`, // something listens there, but 127.0.0.2 is not allowed
      `http://127.0.0.1:${await closedPort()}/`,
      `http://127.0.0.1:${banner.port}/`,
      `http://127.0.0.1:${silent.port}/`,
      `https://127.0.0.1:${receiver.port}/tls`,
      ...(dbIsLocal ? [`http://127.0.0.1:${dbPort}/`] : []),
    ];
    for (const url of urls) await storedEndpoint(team.teamId, url);
    await pauseOne(team);
    await withEnv(LOOPBACK_ONE, () => once(team.teamId));
    const rows = await deliveries(team.teamId);
    expect(rows).toHaveLength(urls.length);
    for (const r of rows)
      expect({ url: r.endpoint.url, status: r.status, attempts: r.attempts, lastError: r.lastError }).toEqual({
        url: r.endpoint.url,
        status: "pending",
        attempts: 1,
        lastError: DELIVERY_FAILED,
      });
    expect(new Set(rows.map((r) => r.lastError)).size).toBe(1);
    expect(inside.hits).toEqual([]);
    expect(receiver.hits.some((h) => h.path === "/tls")).toBe(false);
  } finally {
    await new Promise((r) => banner.close(r));
    await new Promise((r) => silent.close(r));
    await inside.down();
  }
});

test("the cause of a failed delivery is in the webhook worker's log, never in the stored error", async () => {
  const team = await makeTeam();
  const port = await closedPort();
  await storedEndpoint(team.teamId, `http://127.0.0.1:${port}/hook?token=receiver-secret`);
  await storedEndpoint(team.teamId, "http://169.254.169.254/latest/meta-data/");
  await pauseOne(team);
  const worker = spawnCli(["webhook-worker", "--team", team.teamId, "--quiet"], {
    ...LOOPBACK_ONE,
    QUIESCE_WEBHOOK_POLL_MS: "100",
    QUIESCE_WEBHOOK_RETRY_BASE_MS: "60000",
    QUIESCE_LOG_FORMAT: "json",
  });
  try {
    await waitFor("both attempts", async () => (await deliveries(team.teamId)).every((r) => r.attempts === 1), 30_000, 100);
    await waitFor("the log lines", async () => (worker.output().match(/webhook delivery failed/g) ?? []).length >= 2, 10_000, 100);
  } finally {
    await worker.stop();
  }
  expect(new Set((await deliveries(team.teamId)).map((r) => r.lastError))).toEqual(new Set([DELIVERY_FAILED]));
  const lines = worker
    .output()
    .split("\n")
    .filter((l) => l.includes("webhook delivery failed"))
    .map((l) => JSON.parse(l) as { endpoint: string; cause: string });
  expect(lines.find((l) => l.endpoint === `http://127.0.0.1:${port}`)?.cause).toMatch(/ECONNREFUSED/);
  expect(lines.find((l) => l.endpoint === "http://169.254.169.254")?.cause).toMatch(/refused: the address is a link-local address/);
  // The endpoint's origin only: a path or query may carry the receiver's own token.
  expect(worker.output()).not.toContain("receiver-secret");
}, 60_000);

test("a redirect is not followed: it is a failed attempt, and its target gets nothing", async () => {
  const team = await makeTeam();
  const redirecting = await new Receiver().up();
  const target = await new Receiver().up();
  try {
    redirecting.status = 307;
    redirecting.location = `http://127.0.0.1:${target.port}/moved`;
    await storedEndpoint(team.teamId, `http://127.0.0.1:${redirecting.port}/`);
    await pauseOne(team);
    await withEnv(LOOPBACK_ONE, () => once(team.teamId));
    expect(redirecting.hits).toHaveLength(1);
    expect(target.hits).toEqual([]);
    expect((await deliveries(team.teamId))[0]).toMatchObject({ status: "pending", lastError: "HTTP 307" });
  } finally {
    await redirecting.down();
    await target.down();
  }
});

test("the CLI refuses a private address with exit 2 naming url", async () => {
  const { runCli } = await import("../cli/run-cli");
  const team = await makeTeam();
  const { slug } = await prisma().team.findUniqueOrThrow({ where: { id: team.teamId }, select: { slug: true } });
  const r = await runCli(["webhooks", "add", "--team", slug, "--url", "http://169.254.169.254/latest/", "--events", "run.killed"]);
  expect(r.code).toBe(2);
  expect(r.stderr).toContain("url: the address is a link-local address");
  expect(await prisma().webhookEndpoint.count({ where: { teamId: team.teamId } })).toBe(0);
}, 60_000);
