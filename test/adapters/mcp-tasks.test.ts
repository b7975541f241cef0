// MCP tasks through the gateway, settled by the barrier engine's mcp provider (docs/design/mcp-tasks.md),
// against a real MCP server written with the official SDK (fixtures/mcp-task-server.mjs: the SDK's Server
// with a task store for 2025-11-25 and older, a 2026-07-28 server from the specification beside it), over
// stdio and Streamable HTTP; the client is the SDK's Client; real API, database and barrier engine.
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CallToolResultSchema, CreateTaskResultSchema, GetTaskResultSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { prisma } from "../../lib/platform/db/prisma";
import { closePool } from "../../lib/platform/db/pool";
import { newId } from "../../lib/platform/ids";
import { runBarrierWorker } from "../../lib/modules/stop/engine/worker";
import { setTeamStopSettings } from "../../lib/modules/members/team-settings";
import { FIXTURES, makeWorld, ROOT, stopChild, tempDir, until, type World } from "./support";
import { freePort } from "../support/pg-local";

const T = 180_000;
const SERVER = path.join(FIXTURES, "mcp-task-server.mjs");
let w: World;
const clients: Client[] = [];
const children: ChildProcess[] = [];
const engineStop = new AbortController();
let engine: Promise<void>;
let effectServer: http.Server;
let effectUrl = "";

beforeAll(async () => {
  w = await makeWorld();
  await setTeamStopSettings({ type: "system", name: "mcp-tasks-test" }, w.teamId, { quietPeriodMs: 300 });
  // The effect check a deployment system would answer: this test's effects never happened.
  effectServer = http.createServer((_req, res) =>
    res.writeHead(200, { "content-type": "application/json" }).end('{"effect":"absent","final":true}'),
  );
  await new Promise<void>((r) => effectServer.listen(0, "127.0.0.1", r));
  effectUrl = `http://127.0.0.1:${(effectServer.address() as AddressInfo).port}/effect`;
  engine = runBarrierWorker({ teamId: w.teamId, signal: engineStop.signal, pollMs: 200, claimMs: 5000, localSettleMs: 500, listen: true });
}, 120_000);
afterAll(async () => {
  await Promise.allSettled(clients.map((c) => c.close()));
  await Promise.allSettled(children.map((c) => stopChild(c)));
  engineStop.abort();
  await engine;
  effectServer?.close();
  await w?.api.close();
  await closePool();
  await prisma().$disconnect();
});

async function provider(name: string, endpoint: string, opts: { effectCheck?: boolean; deadlineMs?: number } = {}) {
  await prisma().provider.create({
    data: {
      id: newId("prov"),
      teamId: w.teamId,
      name,
      kind: "mcp",
      endpoint,
      statusUrl: opts.effectCheck ? effectUrl : null,
      timeoutMs: 3000,
      settleDeadlineMs: opts.deadlineMs ?? 20_000,
      quietPeriodSeconds: 0,
    },
  });
}

const messages = (dir: string) =>
  existsSync(path.join(dir, "messages.jsonl"))
    ? readFileSync(path.join(dir, "messages.jsonl"), "utf8")
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l) as Record<string, unknown>)
    : [];

function spawnUntil(cmd: string, args: string[], env: NodeJS.ProcessEnv, pattern: RegExp) {
  return new Promise<{ child: ChildProcess; match: string; log: () => string }>((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
    children.push(child);
    let log = "";
    const timer = setTimeout(() => reject(new Error(`${cmd} did not say ${pattern}:\n${log}`)), 90_000);
    const on = (d: Buffer) => {
      log += d;
      const m = pattern.exec(log);
      if (m) {
        clearTimeout(timer);
        resolve({ child, match: m[1] ?? m[0], log: () => log });
      }
    };
    child.stderr!.on("data", on);
    child.stdout!.on("data", on);
    child.once("exit", (code) => clearTimeout(timer) ?? reject(new Error(`${cmd} exited ${code}:\n${log}`)));
  });
}

/** A task server over HTTP; its markers and task files in `dir`. */
async function httpServer(dir: string, env: Record<string, string> = {}) {
  const port = await freePort();
  const s = await spawnUntil(
    process.execPath,
    [SERVER, "http", String(port)],
    { ...process.env, FIXTURE_MARKER_DIR: dir, ...env },
    /listening on port/,
  );
  return { url: `http://127.0.0.1:${port}/mcp`, child: s.child };
}

interface Gw {
  client: Client;
  parentRunId: string;
  log: () => string;
  child?: ChildProcess;
  url?: string;
}

/** The gateway over stdio toward the client, its upstream the stdio task server (or an HTTP URL). */
async function stdioGateway(dir: string, providerName: string, env: Record<string, string> = {}): Promise<Gw> {
  const parent = await w.agent.createRun({ taskId: "mcp-tasks", harness: "custom", title: "agent using MCP tasks" });
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [
      "bin/quiesce-adapter.mjs",
      "mcp-gateway",
      "--run",
      parent.runId,
      "--lease",
      parent.leaseId,
      "--provider",
      providerName,
      "--",
      process.execPath,
      SERVER,
    ],
    cwd: ROOT,
    env: { ...process.env, QUIESCE_URL: w.api.url, QUIESCE_API_KEY: w.gatewayKey, FIXTURE_MARKER_DIR: dir, ...env } as Record<
      string,
      string
    >,
    stderr: "pipe",
  });
  let log = "";
  transport.stderr?.on("data", (d) => (log += d));
  const client = new Client({ name: "mcp-tasks-test", version: "1.0.0" });
  await client.connect(transport);
  clients.push(client);
  return { client, parentRunId: parent.runId, log: () => log };
}

/** The gateway over Streamable HTTP both ways (a process the test can kill). */
async function httpGateway(upstreamUrl: string, providerName: string): Promise<Gw> {
  const parent = await w.agent.createRun({ taskId: "mcp-tasks-http", title: "agent using remote MCP tasks" });
  const g = await spawnUntil(
    process.execPath,
    [
      "bin/quiesce-adapter.mjs",
      "mcp-gateway",
      "--run",
      parent.runId,
      "--lease",
      parent.leaseId,
      "--provider",
      providerName,
      "--listen",
      "127.0.0.1:0",
      "--upstream-url",
      upstreamUrl,
    ],
    { ...process.env, QUIESCE_URL: w.api.url, QUIESCE_API_KEY: w.gatewayKey },
    /serving MCP over Streamable HTTP at (\S+)/,
  );
  const client = new Client({ name: "mcp-tasks-http-test", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(g.match)));
  clients.push(client);
  return { client, parentRunId: parent.runId, log: g.log, child: g.child, url: g.match };
}

const callAsTask = (c: Client, name: string, args: Record<string, unknown>) =>
  c.request({ method: "tools/call", params: { name, arguments: args, task: { ttl: 600_000 } } }, CreateTaskResultSchema);

async function taskOperation(parentRunId: string, tool: string) {
  const run = await until(() => prisma().run.findFirst({ where: { parentRunId, harness: "mcp" } }), "gateway run");
  return until(async () => {
    const o = await prisma().operation.findFirst({ where: { runId: run.id, tool } });
    return o?.providerJobId ? o : null;
  }, "the task id recorded on the operation");
}

async function settled(barrierId: string, operationRowId: string) {
  return until(
    async () => {
      const s = await prisma().settlement.findFirst({ where: { barrierId, operationId: operationRowId } });
      return s?.settledState ? s : null;
    },
    "the settlement",
    90_000,
  );
}

describe("MCP 2025-11-25 tasks over stdio", { timeout: T }, () => {
  test("the task is passed through and recorded; a kill sends tasks/cancel; cancelled with an effect check → cancelled_without_effect", async () => {
    const dir = tempDir("mcp-tasks");
    await provider("mcp-stdio-checked", JSON.stringify(["env", `FIXTURE_MARKER_DIR=${dir}`, process.execPath, SERVER]), {
      effectCheck: true,
    });
    const g = await stdioGateway(dir, "mcp-stdio-checked");
    expect(g.client.getServerCapabilities()?.tasks?.requests?.tools?.call).toBeDefined();
    const { task } = await callAsTask(g.client, "work", { ms: 600_000, marker: "t1" });
    expect(task.status).toBe("working");
    const op = await taskOperation(g.parentRunId, "work");
    expect(op).toMatchObject({ state: "running", providerName: "mcp-stdio-checked", providerJobId: task.taskId });
    // tasks/get is relayed.
    expect(await g.client.request({ method: "tasks/get", params: { taskId: task.taskId } }, GetTaskResultSchema)).toMatchObject({
      taskId: task.taskId,
      status: "working",
    });
    expect(g.log()).toMatch(/upstream fixture-task-server negotiated MCP 2025-11-25 \(tasks\)/);
    expect(g.log()).toMatch(/client session stdio negotiated MCP 2025-11-25/);

    const { barrierId } = await w.operator.kill(g.parentRunId, "stop the task");
    await until(() => existsSync(path.join(dir, "t1.cancelled")), "the task cancelled upstream");
    const cancels = messages(dir).filter((m) => m.received === "tasks/cancel");
    expect(cancels.length).toBeGreaterThanOrEqual(1);
    // The task's own request was answered long ago: it is never "cancelled" by notification.
    const call = messages(dir).find((m) => m.received === "tools/call")!;
    expect(
      messages(dir).some((m) => m.received === "notifications/cancelled" && (m.params as { requestId?: unknown }).requestId === call.id),
    ).toBe(false);
    const s = await settled(barrierId, op.id);
    expect(s.settledState).toBe("cancelled_without_effect");
    expect(existsSync(path.join(dir, "t1.done"))).toBe(false);
  });

  test("cancelled without an effect check → unknown, naming who said what", async () => {
    const dir = tempDir("mcp-tasks");
    await provider("mcp-stdio", JSON.stringify(["env", `FIXTURE_MARKER_DIR=${dir}`, process.execPath, SERVER]));
    const g = await stdioGateway(dir, "mcp-stdio");
    const { task } = await callAsTask(g.client, "work", { ms: 600_000, marker: "t2" });
    const op = await taskOperation(g.parentRunId, "work");
    const { barrierId } = await w.operator.kill(g.parentRunId, "stop the task");
    const s = await settled(barrierId, op.id);
    expect(s.settledState).toBe("unknown");
    expect(s.settledReason).toContain(`the MCP server reported task ${task.taskId} cancelled at`);
    expect(s.settledReason).toContain("the server says cancelled; no effect check");
    expect(await prisma().reconciliation.findFirst({ where: { operationId: op.id } })).not.toBeNull();
  });

  test("a task that completes during the cancel → completed_and_verified, the result's digest on the effect receipt", async () => {
    const dir = tempDir("mcp-tasks");
    await provider("mcp-stdio-stubborn", JSON.stringify(["env", `FIXTURE_MARKER_DIR=${dir}`, process.execPath, SERVER]));
    const g = await stdioGateway(dir, "mcp-stdio-stubborn");
    const { task } = await callAsTask(g.client, "stubborn", { ms: 3000, marker: "t3" });
    const op = await taskOperation(g.parentRunId, "stubborn");
    const { barrierId } = await w.operator.kill(g.parentRunId, "too late to stop");
    const s = await settled(barrierId, op.id);
    expect(s.settledState).toBe("completed_and_verified");
    expect(s.settledReason).toContain(`the MCP server reported task ${task.taskId} completed`);
    const receipt = await prisma().effectReceipt.findFirstOrThrow({ where: { operationId: op.id } });
    expect(receipt.providerOperationId).toBe(task.taskId);
    expect(receipt.detail).toMatchObject({ resultDigest: expect.stringMatching(/^sha256:[0-9a-f]{64}$/) });
    expect(existsSync(path.join(dir, "t3.done"))).toBe(true);
  });

  test("a task waiting for input that never comes (input_required) → unknown at the deadline", async () => {
    const dir = tempDir("mcp-tasks");
    await provider("mcp-stdio-asks", JSON.stringify(["env", `FIXTURE_MARKER_DIR=${dir}`, process.execPath, SERVER]), { deadlineMs: 1500 });
    const g = await stdioGateway(dir, "mcp-stdio-asks");
    const { task } = await callAsTask(g.client, "asks", { marker: "i1" });
    const op = await taskOperation(g.parentRunId, "asks");
    await until(
      async () =>
        (await g.client.request({ method: "tasks/get", params: { taskId: task.taskId } }, GetTaskResultSchema)).status === "input_required",
      "the task to wait for input",
    );
    const { barrierId } = await w.operator.kill(g.parentRunId, "stop the waiting task");
    const s = await settled(barrierId, op.id);
    expect(s.settledState).toBe("unknown");
    expect(s.settledReason).toContain(`the MCP server reported task ${task.taskId} input_required`);
  });

  // Every version the SDK's client negotiates (it never asks for 2024-10-07).
  test.each(["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"])(
    "a plain call killed on a %s upstream: notifications/cancelled, as that version defines",
    async (version) => {
      const dir = tempDir("mcp-plain");
      await provider(`mcp-plain-${version}`, "[]");
      const g = await stdioGateway(dir, `mcp-plain-${version}`, version < "2025-11-25" ? { FIXTURE_PROTOCOL: version } : {});
      expect(g.log()).toContain(`negotiated MCP ${version}`);
      const pending = g.client.callTool({ name: "slow", arguments: { ms: 600_000, marker: "p1" } }, undefined, { timeout: 600_000 });
      await until(() => existsSync(path.join(dir, "p1.started")), "the call to start upstream");
      await w.operator.kill(g.parentRunId, "stop the plain call");
      expect(((await pending) as CallToolResult).isError).toBe(true);
      await until(() => existsSync(path.join(dir, "p1.cancelled")), "upstream cancellation");
      expect(messages(dir).some((m) => m.received === "notifications/cancelled")).toBe(true);
      // A pre-tasks upstream: the gateway offers its clients no tasks either.
      expect(!!g.client.getServerCapabilities()?.tasks).toBe(version === "2025-11-25");
    },
  );
});

describe("over Streamable HTTP", { timeout: T }, () => {
  test("2025-11-25: a task still working after the gateway process is gone is settled by the engine asking the server", async () => {
    const dir = tempDir("mcp-http-tasks");
    const up = await httpServer(dir, { FIXTURE_NO_2026: "1" });
    await provider("mcp-http", up.url, { effectCheck: true });
    const g = await httpGateway(up.url, "mcp-http");
    expect(g.log()).toMatch(/negotiated MCP 2025-11-25 \(tasks\)/);
    const { task } = await callAsTask(g.client, "work", { ms: 600_000, marker: "h1" });
    const op = await taskOperation(g.parentRunId, "work");
    g.child!.kill("SIGKILL");
    await new Promise((r) => g.child!.once("exit", r));
    const { barrierId } = await w.operator.kill(g.parentRunId, "the gateway is gone; stop the task");
    const s = await settled(barrierId, op.id);
    expect(s.settledState).toBe("cancelled_without_effect");
    expect(messages(dir).some((m) => m.received === "tasks/cancel" && (m.params as { taskId?: string }).taskId === task.taskId)).toBe(true);
    expect(existsSync(path.join(dir, "h1.done"))).toBe(false);
  });

  test("a server that stops answering: unknown at the provider's deadline, for a person", async () => {
    const dir = tempDir("mcp-http-gone");
    const up = await httpServer(dir);
    await provider("mcp-http-gone", up.url, { deadlineMs: 1500 });
    const g = await httpGateway(up.url, "mcp-http-gone");
    await callAsTask(g.client, "work", { ms: 600_000, marker: "g1" });
    const op = await taskOperation(g.parentRunId, "work");
    await stopChild(up.child);
    const { barrierId } = await w.operator.kill(g.parentRunId, "stop; the server is gone");
    const s = await settled(barrierId, op.id);
    expect(s.settledState).toBe("unknown");
    expect(s.settledReason).toMatch(/unknown: (target_unreachable|provider_status_unavailable)/);
  });

  test("2026-07-28: a plain call is cancelled by closing its stream (no notifications/cancelled); a task by tasks/cancel", async () => {
    const dir = tempDir("mcp-2026");
    const up = await httpServer(dir);
    await provider("mcp-2026", up.url);
    const g = await httpGateway(up.url, "mcp-2026");
    expect(g.log()).toMatch(/negotiated MCP 2026-07-28 \(tasks\)/);
    const plain = g.client.request(
      { method: "tools/call", params: { name: "slow", arguments: { ms: 600_000, marker: "s1" } } },
      CallToolResultSchema,
      {
        timeout: 600_000,
      },
    );
    const { task } = await callAsTask(g.client, "work", { ms: 600_000, marker: "s2" });
    const op = await taskOperation(g.parentRunId, "work");
    await until(() => existsSync(path.join(dir, "s1.started")), "the plain call to start upstream");
    const { barrierId } = await w.operator.kill(g.parentRunId, "stop both");
    expect((await plain).isError).toBe(true);
    await until(() => existsSync(path.join(dir, "s1.cancelled")), "the plain call cancelled by its stream closing");
    await until(() => existsSync(path.join(dir, "s2.cancelled")), "the task cancelled by tasks/cancel");
    const seen = messages(dir);
    expect(seen.some((m) => m.event === "stream-closed")).toBe(true);
    expect(seen.some((m) => m.received === "notifications/cancelled")).toBe(false);
    expect(seen.filter((m) => m.received === "tasks/cancel").every((m) => m.version === "2026-07-28")).toBe(true);
    const s = await settled(barrierId, op.id);
    expect(s.settledState).toBe("unknown");
    expect(s.settledReason).toContain(`the MCP server reported task ${task.taskId} cancelled`);
  });

  test("a 2026-07-28 client of the gateway: stateless requests, a task passed through, and its closed stream cancels the call upstream", async () => {
    const dir = tempDir("mcp-2026-client");
    const up = await httpServer(dir);
    await provider("mcp-2026-client", up.url);
    const g = await httpGateway(up.url, "mcp-2026-client");
    let id = 0;
    const post = (method: string, params: Record<string, unknown>, signal?: AbortSignal) =>
      fetch(g.url!, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          "mcp-protocol-version": "2026-07-28",
        },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: ++id,
          method,
          params: {
            ...params,
            _meta: {
              "io.modelcontextprotocol/protocolVersion": "2026-07-28",
              "io.modelcontextprotocol/clientCapabilities": { extensions: { "io.modelcontextprotocol/tasks": {} } },
              "io.modelcontextprotocol/clientInfo": { name: "raw-2026-client", version: "1" },
            },
          },
        }),
        signal,
      });
    const answer = async (r: Response) => {
      const text = await r.text();
      const data = text.split("\n").filter((l) => l.startsWith("data:"));
      return JSON.parse(data.length ? data[data.length - 1]!.slice(5) : text) as { result?: Record<string, unknown>; error?: unknown };
    };
    const discovered = await answer(await post("server/discover", {}));
    expect(discovered.result).toMatchObject({
      resultType: "complete",
      capabilities: { extensions: { "io.modelcontextprotocol/tasks": {} } },
    });
    expect((discovered.result!.supportedVersions as string[])[0]).toBe("2026-07-28");
    const tools = await answer(await post("tools/list", {}));
    expect((tools.result!.tools as { name: string }[]).map((t) => t.name)).toContain("work");

    // A task, created by the 2026-07-28 upstream, passed through to the 2026-07-28 client.
    const created = await answer(await post("tools/call", { name: "work", arguments: { ms: 600_000, marker: "c1" } }));
    expect(created.result).toMatchObject({ resultType: "task", status: "working" });
    const taskId = created.result!.taskId as string;
    expect((await answer(await post("tasks/get", { taskId }))).result).toMatchObject({ resultType: "complete", taskId, status: "working" });
    expect((await taskOperation(g.parentRunId, "work")).providerJobId).toBe(taskId);

    // A plain call whose stream the client closes: cancelled upstream by closing the upstream's stream.
    const ctrl = new AbortController();
    const plain = post("tools/call", { name: "slow", arguments: { ms: 600_000, marker: "c2" } }, ctrl.signal).then((r) => r.text());
    await until(() => existsSync(path.join(dir, "c2.started")), "the plain call to start upstream");
    ctrl.abort();
    await expect(plain).rejects.toThrow();
    await until(() => existsSync(path.join(dir, "c2.cancelled")), "the upstream call cancelled");
    expect(messages(dir).some((m) => m.event === "stream-closed")).toBe(true);
    expect(messages(dir).some((m) => m.received === "notifications/cancelled")).toBe(false);
    const run = await until(() => prisma().run.findFirst({ where: { parentRunId: g.parentRunId, harness: "mcp" } }), "gateway run");
    const op = await until(async () => {
      const o = await prisma().operation.findFirst({ where: { runId: run.id, tool: "slow" } });
      return o?.state === "aborted_unknown" ? o : null;
    }, "the closed call recorded aborted_unknown");
    expect(op.outcomeDetail).toMatchObject({ abortedBy: "caller" });
    expect(g.log()).toContain("client raw-2026-client speaks MCP 2026-07-28 (stateless)");
  });
});
