// GET/POST /api/v1/providers (docs/adapters/mcp-gateway.md#registering-a-provider): admins register providers of kind
// http, mcp (Streamable HTTP) and a2a; bad input, an address inside the network, a stdio command and a
// taken name write nothing; people of the team list them, another team never sees them. A provider's
// job page template fills each unknown outcome's link, only when the operation has every value it names.
import { afterAll, afterEach, beforeAll, describe, expect, test } from "vitest";
import { prisma } from "../../lib/platform/db/prisma";
import { listReconciliations } from "../../lib/modules/stop";
import { makeRun } from "../support/fixtures";
import { addOp } from "../barrier/fixtures";
import { makeWorld, raw, type World } from "./fixtures";

let w: World;
beforeAll(async () => {
  w = await makeWorld();
}, 120_000);
afterAll(async () => {
  await w?.close();
});
afterEach(() => {
  delete process.env.QUIESCE_PROVIDER_ALLOW_PRIVATE;
});

// A public address literal: judged without a name lookup, and nothing here connects to it.
const PUBLIC = "http://1.1.1.1";

/** What a refusal must leave as it was: the team's providers and its audit head. */
async function state(teamId: string) {
  const providers = await prisma().provider.findMany({
    where: { teamId },
    orderBy: { name: "asc" },
    select: { name: true, endpoint: true },
  });
  const head = await prisma().auditEvent.findFirst({ where: { teamId }, orderBy: { id: "desc" }, select: { id: true } });
  return { providers, head: head?.id ?? null };
}

const post = (key: string, body: unknown) => raw(w.server.url, "POST", "/api/v1/providers", { key, body });

describe("registering", () => {
  test("an admin registers an MCP server, an A2A agent and an http provider; the team lists them, the other team does not", async () => {
    const admin = w.client(w.a.keys.admin);
    const mcp = await admin.createProvider({ name: "mcp-tasks", kind: "mcp", url: `${PUBLIC}/mcp`, statusUrl: `${PUBLIC}/effect` });
    expect(mcp).toMatchObject({
      name: "mcp-tasks",
      kind: "mcp",
      url: `${PUBLIC}/mcp`,
      command: null,
      statusUrl: `${PUBLIC}/effect`,
      cancelUrl: null,
      timeoutMs: 5000,
      settleDeadlineMs: 30000,
      quietPeriodSeconds: 30,
    });
    await admin.createProvider({
      name: "remote-agent",
      kind: "a2a",
      url: `${PUBLIC}/a2a`,
      quietPeriodSeconds: 5,
      rollbackOwner: "agents-oncall",
    });
    const deployer = await admin.createProvider({
      name: "deployer",
      kind: "http",
      cancelUrl: `${PUBLIC}/cancel`,
      statusUrl: `${PUBLIC}/status/{providerJobId}`,
      jobUrl: "https://deploy.example/jobs/{providerJobId}",
    });
    expect(deployer.jobUrl).toBe("https://deploy.example/jobs/{providerJobId}");
    expect(mcp.jobUrl).toBeNull();
    const row = await prisma().provider.findFirstOrThrow({ where: { teamId: w.a.teamId, name: "mcp-tasks" } });
    expect(row).toMatchObject({ kind: "mcp", endpoint: `${PUBLIC}/mcp`, statusUrl: `${PUBLIC}/effect` });
    const audit = await prisma().auditEvent.findFirstOrThrow({ where: { teamId: w.a.teamId, action: "provider.create", target: mcp.id } });
    expect(audit.actor).toContain("user");

    const listed = await w.client(w.a.keys.viewerOperator).listProviders();
    expect(listed.providers.map((p) => p.name)).toEqual(["deployer", "mcp-tasks", "remote-agent"]);
    expect(listed.providers.map((p) => p.jobUrl)).toEqual(["https://deploy.example/jobs/{providerJobId}", null, null]);
    expect((await w.client(w.b.keys.admin).listProviders()).providers).toEqual([]);
    // The other team may use the same name: names are per team.
    expect(await w.client(w.b.keys.admin).createProvider({ name: "mcp-tasks", kind: "a2a", url: `${PUBLIC}/b` })).toMatchObject({
      kind: "a2a",
    });
  });

  test("a taken name is 409 and changes nothing", async () => {
    await w.client(w.a.keys.admin).createProvider({ name: "taken", kind: "a2a", url: `${PUBLIC}/one` });
    const before = await state(w.a.teamId);
    const r = await post(w.a.keys.admin, { name: "taken", kind: "a2a", url: `${PUBLIC}/two` });
    expect(r.status).toBe(409);
    expect(r.text).toContain("name");
    expect(await state(w.a.teamId)).toEqual(before);
  });
});

describe("refusals write nothing", () => {
  const bad: [string, unknown, string][] = [
    ["an unknown field", { name: "x1", kind: "mcp", url: `${PUBLIC}/mcp`, secret: "s" }, "secret"],
    ["a bad URL", { name: "x2", kind: "a2a", url: "not a url" }, "url"],
    ["a URL that is not http(s)", { name: "x3", kind: "a2a", url: "file:///etc/passwd" }, "url"],
    ["an empty command", { name: "x4", kind: "mcp", command: [] }, "command"],
    ["an empty argument", { name: "x5", kind: "mcp", command: ["node", ""] }, "command"],
    ["both a URL and a command", { name: "x6", kind: "mcp", url: `${PUBLIC}/mcp`, command: ["node"] }, "url"],
    ["an a2a provider without its URL", { name: "x7", kind: "a2a" }, "url"],
    ["a field the kind does not read", { name: "x8", kind: "a2a", url: `${PUBLIC}/a`, cancelUrl: `${PUBLIC}/c` }, "cancelUrl"],
    ["an http provider with neither URL", { name: "x9", kind: "http" }, "statusUrl"],
    ["an unknown kind", { name: "x10", kind: "simulated", url: `${PUBLIC}/a` }, "kind"],
    ["a bad name", { name: "has space", kind: "a2a", url: `${PUBLIC}/a` }, "name"],
    ["a loopback address", { name: "x11", kind: "mcp", url: "http://127.0.0.1:9/mcp" }, "loopback"],
    ["the cloud metadata address", { name: "x12", kind: "a2a", url: "http://169.254.169.254/latest" }, "link-local"],
    ["a private effect check", { name: "x13", kind: "mcp", url: `${PUBLIC}/mcp`, statusUrl: "http://10.0.0.7/effect" }, "statusUrl"],
    ["localhost by name", { name: "x14", kind: "a2a", url: "http://localhost.:8080/" }, "url"],
    ["credentials in the URL", { name: "x15", kind: "a2a", url: "http://user:pw@1.1.1.1/" }, "credentials"],
    [
      "a job page that is not http(s)",
      { name: "x16", kind: "a2a", url: `${PUBLIC}/a`, jobUrl: "javascript:alert(1)//{providerJobId}" },
      "jobUrl",
    ],
    [
      "a job page with an unknown placeholder",
      { name: "x17", kind: "a2a", url: `${PUBLIC}/a`, jobUrl: "https://d.example/{jobId}" },
      "{jobId}",
    ],
    ["a job page that is not a URL", { name: "x18", kind: "a2a", url: `${PUBLIC}/a`, jobUrl: "jobs/{providerJobId}" }, "jobUrl"],
  ];
  test.each(bad)("%s: 400 naming it", async (_what, body, named) => {
    const before = await state(w.a.teamId);
    const r = await post(w.a.keys.admin, body);
    expect(r.status, r.text).toBe(400);
    expect(r.text).toContain(named);
    expect(await state(w.a.teamId)).toEqual(before);
  });

  test("a stdio command through the API: 403 (it would run on the engine's host), nothing written", async () => {
    const before = await state(w.a.teamId);
    const r = await post(w.a.keys.admin, { name: "stdio", kind: "mcp", command: ["node", "server.js"] });
    expect(r.status).toBe(403);
    expect(r.text).toContain("command");
    expect(await state(w.a.teamId)).toEqual(before);
  });

  test("operators, viewers and machine keys may not register; machine keys may not list", async () => {
    const before = await state(w.a.teamId);
    for (const key of [w.a.keys.operator, w.a.keys.viewerOperator, w.a.keys.agent, w.a.keys.gateway])
      expect((await post(key, { name: "nope", kind: "a2a", url: `${PUBLIC}/a` })).status).toBe(403);
    for (const key of [w.a.keys.agent, w.a.keys.worker, w.a.keys.gateway])
      expect((await raw(w.server.url, "GET", "/api/v1/providers", { key })).status).toBe(403);
    expect((await raw(w.server.url, "GET", "/api/v1/providers", { key: null })).status).toBe(401);
    expect(await state(w.a.teamId)).toEqual(before);
  });
});

test("QUIESCE_PROVIDER_ALLOW_PRIVATE lets an address inside the network through, and only that one", async () => {
  process.env.QUIESCE_PROVIDER_ALLOW_PRIVATE = "10.0.0.0/24";
  const admin = w.client(w.a.keys.admin);
  expect(await admin.createProvider({ name: "inside", kind: "a2a", url: "http://10.0.0.7:8080/a2a" })).toMatchObject({
    url: "http://10.0.0.7:8080/a2a",
  });
  const r = await post(w.a.keys.admin, { name: "neighbour", kind: "a2a", url: "http://10.0.1.7:8080/a2a" });
  expect(r.status).toBe(400);
  expect(r.text).toContain("QUIESCE_PROVIDER_ALLOW_PRIVATE");
});

test("an unknown outcome links its provider's job page when the provider has a template and the operation has its values", async () => {
  const admin = w.client(w.a.keys.admin);
  await admin.createProvider({
    name: "pages",
    kind: "http",
    statusUrl: `${PUBLIC}/status`,
    jobUrl: "https://deploy.example/runs/{runId}/jobs/{providerJobId}",
  });
  await admin.createProvider({ name: "no-pages", kind: "http", statusUrl: `${PUBLIC}/status` });
  const run = await makeRun(w.a.teamId, { title: "job pages" });
  const unknown = async (providerName: string, providerJobId?: string) => {
    const op = await addOp(w.a.teamId, run, { state: "running", providerName, providerJobId });
    await prisma().operation.update({ where: { id: op.rowId }, data: { state: "aborted_unknown", finishedAt: new Date() } });
    return op.operationId;
  };
  const linked = await unknown("pages", "job 7/a");
  const noTemplate = await unknown("no-pages", "job-8");
  const noJobId = await unknown("pages");
  const system = { type: "system", name: "test" } as const;
  const recs = await listReconciliations(system, { teamId: w.a.teamId, status: "open" });
  const link = (operationId: string) => recs.find((r) => r.operationId === operationId)?.providerJobUrl;
  // Each value is URL-encoded where it is put, so a job id cannot change the address's shape.
  expect(link(linked)).toBe(`https://deploy.example/runs/${run.runId}/jobs/job%207%2Fa`);
  expect(link(noTemplate)).toBeNull();
  expect(link(noJobId)).toBeNull();
});
