// The MCP gateway over Streamable HTTP in BOTH directions, in front of the real reference server
// (@modelcontextprotocol/server-everything, pinned, installed into the client cache, see clients.ts) running in
// its streamableHttp mode; clients are the official SDK's Client and a raw HTTP client speaking an
// older protocol version. Real API server and database.
import { spawn, type ChildProcess } from "node:child_process";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { prisma } from "../../../lib/platform/db/prisma";
import { closePool } from "../../../lib/platform/db/pool";
import { makeWorld, ROOT, stopChild, until, type World } from "../support";
import { ensureClient, type ClientBinary } from "./clients";
import { freePort } from "../../support/pg-local";

let everything: ClientBinary | null = null;
let w: World;
const children: ChildProcess[] = [];
const clients: Client[] = [];
let upstreamUrl = "";

/** Spawns and resolves once `pattern` appears on stderr (its first capture group, or the line). */
function spawnUntil(
  cmd: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  pattern: RegExp,
): Promise<{ child: ChildProcess; match: string; log: () => string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
    children.push(child);
    let log = "";
    const timer = setTimeout(() => reject(new Error(`${cmd} did not say ${pattern} within 60 s:\n${log}`)), 60_000);
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
    child.once("exit", (code) => reject(new Error(`${cmd} exited ${code}:\n${log}`)));
  });
}

beforeAll(async () => {
  const c = await ensureClient("everything");
  if (!c.available) return;
  everything = c;
  w = await makeWorld();
  const port = await freePort();
  await spawnUntil(process.execPath, [c.bin, "streamableHttp"], { ...process.env, PORT: String(port) }, /listening on port/);
  upstreamUrl = `http://127.0.0.1:${port}/mcp`;
}, 600_000);
afterAll(async () => {
  await Promise.allSettled(clients.map((cl) => cl.close()));
  await Promise.allSettled(children.map((ch) => stopChild(ch)));
  if (!everything) return;
  await w?.api.close();
  await closePool();
  await prisma().$disconnect();
});

async function startGateway(): Promise<{ url: string; parentRunId: string }> {
  const parent = await w.agent.createRun({ taskId: "mcp-http", title: "agent using remote MCP" });
  const g = await spawnUntil(
    process.execPath,
    [
      "bin/quiesce-adapter.mjs",
      "mcp-gateway",
      "--run",
      parent.runId,
      "--lease",
      parent.leaseId,
      "--listen",
      "127.0.0.1:0",
      "--upstream-url",
      upstreamUrl,
    ],
    { ...process.env, QUIESCE_URL: w.api.url, QUIESCE_API_KEY: w.gatewayKey },
    /serving MCP over Streamable HTTP at (\S+)/,
  );
  return { url: g.match, parentRunId: parent.runId };
}

async function connect(url: string): Promise<Client> {
  const client = new Client({ name: "mcp-http-test", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  clients.push(client);
  return client;
}

const text = (r: CallToolResult) => (r.content[0] as { text: string }).text;

describe("MCP gateway over Streamable HTTP", { timeout: 180_000 }, () => {
  test("an HTTP client reaches a remote (HTTP) upstream through the gate; upstream progress is relayed with the client's token", async (ctx) => {
    if (!everything) return ctx.skip();
    const gw = await startGateway();
    const client = await connect(gw.url);
    const tools = (await client.listTools()).tools.map((t) => t.name);
    expect(tools).toEqual(expect.arrayContaining(["echo", "trigger-long-running-operation"]));
    const echoed = (await client.callTool({ name: "echo", arguments: { message: "through http" } })) as CallToolResult;
    expect(text(echoed)).toContain("through http");
    const progress: number[] = [];
    const long = (await client.callTool({ name: "trigger-long-running-operation", arguments: { duration: 1, steps: 3 } }, undefined, {
      onprogress: (p) => progress.push(p.progress),
    })) as CallToolResult;
    expect(text(long)).toContain("completed");
    expect(progress).toEqual([1, 2, 3]);
    // A second client session: its request ids start again at 0, its operations are its own.
    const second = await connect(gw.url);
    expect(text((await second.callTool({ name: "echo", arguments: { message: "second session" } })) as CallToolResult)).toContain(
      "second session",
    );
    const run = await until(() => prisma().run.findFirst({ where: { parentRunId: gw.parentRunId, harness: "mcp" } }), "gateway run");
    const ops = await until(async () => {
      const o = await prisma().operation.findMany({ where: { runId: run.id }, orderBy: { createdAt: "asc" } });
      return o.length === 3 && o.every((x) => x.state === "succeeded") ? o : null;
    }, "three completed operations");
    expect(ops.map((o) => o.tool)).toEqual(["echo", "trigger-long-running-operation", "echo"]);
    expect(new Set(ops.map((o) => o.operationId)).size).toBe(3);
  });

  test("a call held by a pause sends progress while it waits, and runs after the resume", async (ctx) => {
    if (!everything) return ctx.skip();
    const gw = await startGateway();
    const client = await connect(gw.url);
    await client.callTool({ name: "echo", arguments: { message: "warm" } });
    await w.operator.pause(gw.parentRunId, "hold the remote call");
    const progress: string[] = [];
    const call = client.callTool({ name: "echo", arguments: { message: "after pause" } }, undefined, {
      onprogress: (p) => progress.push(p.message ?? ""),
      timeout: 120_000,
    });
    await until(() => progress.length >= 2, "progress while held");
    expect(progress[0]).toMatch(/paused/);
    await w.operator.resume(gw.parentRunId, "release");
    expect(text((await call) as CallToolResult)).toContain("after pause");
  });

  test("a client on protocol 2024-11-05 gets resource links as text, not a content type it does not know", async (ctx) => {
    if (!everything) return ctx.skip();
    const gw = await startGateway();
    const headers: Record<string, string> = { "content-type": "application/json", accept: "application/json, text/event-stream" };
    const post = async (body: unknown) => {
      const r = await fetch(gw.url, { method: "POST", headers, body: JSON.stringify(body) });
      const raw = await r.text();
      const data = raw
        .split("\n")
        .filter((l) => l.startsWith("data:"))
        .map((l) => JSON.parse(l.slice(5)));
      return { r, msgs: data.length ? data : raw ? [JSON.parse(raw)] : [] };
    };
    const init = await post({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2024-11-05", capabilities: {}, clientInfo: { name: "old", version: "0" } },
    });
    expect(init.msgs[0].result.protocolVersion).toBe("2024-11-05");
    headers["mcp-session-id"] = init.r.headers.get("mcp-session-id")!;
    headers["mcp-protocol-version"] = "2024-11-05";
    await post({ jsonrpc: "2.0", method: "notifications/initialized" });
    const res = await post({
      jsonrpc: "2.0",
      id: 2,
      method: "tools/call",
      params: { name: "get-resource-links", arguments: { count: 2 } },
    });
    const result = res.msgs.find((m) => m.id === 2).result;
    const types = result.content.map((c: { type: string }) => c.type);
    expect(types).not.toContain("resource_link");
    expect(types.every((t: string) => t === "text")).toBe(true);
    expect(JSON.stringify(result.content)).toMatch(/Resource 1/);
  });
});
