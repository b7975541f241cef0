// MCP tasks (2025-11-25) through the gateway in front of the real reference server
// (@modelcontextprotocol/server-everything, pinned, see clients.ts) and its task tool
// `simulate-research-query` (taskSupport "required", the SDK's in-memory task store, tasks scoped to the
// session that created them). Real API, database and barrier engine (docs/design/mcp-tasks.md).
import { spawn, type ChildProcess } from "node:child_process";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CallToolResultSchema, CreateTaskResultSchema, GetTaskResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { prisma } from "../../../lib/platform/db/prisma";
import { closePool } from "../../../lib/platform/db/pool";
import { newId } from "../../../lib/platform/ids";
import { runBarrierWorker } from "../../../lib/modules/stop/engine/worker";
import { setTeamStopSettings } from "../../../lib/modules/members/team-settings";
import { makeWorld, ROOT, stopChild, until, type World } from "../support";
import { ensureClient, type ClientBinary } from "./clients";
import { freePort } from "../../support/pg-local";

let everything: ClientBinary | null = null;
let w: World;
const children: ChildProcess[] = [];
const clients: Client[] = [];
const engineStop = new AbortController();
let engine: Promise<void> | null = null;
let upstreamUrl = "";

function spawnUntil(cmd: string, args: string[], env: NodeJS.ProcessEnv, pattern: RegExp) {
  return new Promise<{ match: string; log: () => string }>((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
    children.push(child);
    let log = "";
    const timer = setTimeout(() => reject(new Error(`${cmd} did not say ${pattern}:\n${log}`)), 90_000);
    const on = (d: Buffer) => {
      log += d;
      const m = pattern.exec(log);
      if (m) {
        clearTimeout(timer);
        resolve({ match: m[1] ?? m[0], log: () => log });
      }
    };
    child.stderr!.on("data", on);
    child.stdout!.on("data", on);
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`${cmd} exited ${code}:\n${log}`));
    });
  });
}

beforeAll(async () => {
  const c = await ensureClient("everything");
  if (!c.available) return;
  everything = c;
  w = await makeWorld();
  await setTeamStopSettings({ type: "system", name: "everything-tasks" }, w.teamId, { quietPeriodMs: 300 });
  const port = await freePort();
  await spawnUntil(process.execPath, [c.bin, "streamableHttp"], { ...process.env, PORT: String(port) }, /listening on port/);
  upstreamUrl = `http://127.0.0.1:${port}/mcp`;
  await prisma().provider.create({
    data: {
      id: newId("prov"),
      teamId: w.teamId,
      name: "everything",
      kind: "mcp",
      endpoint: upstreamUrl,
      timeoutMs: 3000,
      settleDeadlineMs: 3000,
      quietPeriodSeconds: 0,
    },
  });
  engine = runBarrierWorker({ teamId: w.teamId, signal: engineStop.signal, pollMs: 200, claimMs: 5000, localSettleMs: 500, listen: true });
}, 600_000);
afterAll(async () => {
  await Promise.allSettled(clients.map((c) => c.close()));
  await Promise.allSettled(children.map((c) => stopChild(c)));
  engineStop.abort();
  await engine;
  if (!everything) return;
  await w?.api.close();
  await closePool();
  await prisma().$disconnect();
});

async function gateway() {
  const parent = await w.agent.createRun({ taskId: "everything-tasks", title: "agent using server-everything's tasks" });
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
      "everything",
      "--listen",
      "127.0.0.1:0",
      "--upstream-url",
      upstreamUrl,
    ],
    { ...process.env, QUIESCE_URL: w.api.url, QUIESCE_API_KEY: w.gatewayKey },
    /serving MCP over Streamable HTTP at (\S+)/,
  );
  const client = new Client({ name: "everything-tasks-test", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(g.match)));
  clients.push(client);
  return { client, parentRunId: parent.runId, log: g.log };
}

const research = (c: Client, topic: string) =>
  c.request(
    { method: "tools/call", params: { name: "simulate-research-query", arguments: { topic }, task: { ttl: 300_000 } } },
    CreateTaskResultSchema,
  );

async function operation(parentRunId: string) {
  const run = await until(() => prisma().run.findFirst({ where: { parentRunId, harness: "mcp" } }), "gateway run");
  return until(async () => {
    const o = await prisma().operation.findFirst({ where: { runId: run.id, tool: "simulate-research-query" } });
    return o?.providerJobId ? o : null;
  }, "the task id recorded");
}

describe("server-everything's task tool through the gateway", { timeout: 180_000 }, () => {
  test("a task that completes: relayed tasks/get and tasks/result, the operation succeeded with the result's digest as its effect", async (ctx) => {
    if (!everything) return ctx.skip();
    const g = await gateway();
    expect(g.log()).toMatch(/negotiated MCP 2025-11-25 \(tasks\)/);
    const { task } = await research(g.client, "quiet rooms");
    const op = await operation(g.parentRunId);
    expect(op).toMatchObject({ state: "running", providerJobId: task.taskId, providerName: "everything" });
    await until(
      async () =>
        (await g.client.request({ method: "tasks/get", params: { taskId: task.taskId } }, GetTaskResultSchema)).status === "completed",
      "the task to complete",
    );
    const result = await g.client.request({ method: "tasks/result", params: { taskId: task.taskId } }, CallToolResultSchema);
    expect(JSON.stringify(result.content)).toContain("Research Report: quiet rooms");
    const done = await until(async () => {
      const o = await prisma().operation.findUnique({ where: { id: op.id } });
      return o?.state === "succeeded" ? o : null;
    }, "the operation reported succeeded");
    expect(done.outcomeDetail).toMatchObject({ taskId: task.taskId, taskStatus: "completed" });
    const receipt = await prisma().effectReceipt.findFirstOrThrow({ where: { operationId: op.id } });
    expect(receipt.providerOperationId).toBe(task.taskId);
    expect(receipt.detail).toMatchObject({ resultDigest: expect.stringMatching(/^sha256:/) });
  });

  test("killed mid-task: the gateway sends tasks/cancel; a server that scopes tasks to their session answers the engine 'not found': unknown", async (ctx) => {
    if (!everything) return ctx.skip();
    const g = await gateway();
    const { task } = await research(g.client, "loud rooms");
    const op = await operation(g.parentRunId);
    const { barrierId } = await w.operator.kill(g.parentRunId, "stop the research");
    await until(
      async () =>
        (await g.client.request({ method: "tasks/get", params: { taskId: task.taskId } }, GetTaskResultSchema)).status === "cancelled",
      "the task cancelled at the server (seen in the gateway's session)",
    );
    expect(g.log()).toContain(`cancelling task ${task.taskId} upstream (tasks/cancel)`);
    const s = await until(
      async () => {
        const x = await prisma().settlement.findFirst({ where: { barrierId, operationId: op.id } });
        return x?.settledState ? x : null;
      },
      "the settlement",
      90_000,
    );
    expect(s.settledState).toBe("unknown");
    // The engine's own session does not see the gateway session's task: the server answers with an error.
    expect(s.settledReason).toContain(`the MCP server answered tasks/get for task ${task.taskId} with error`);
  });
});
