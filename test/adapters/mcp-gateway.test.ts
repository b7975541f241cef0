// The MCP gateway end to end: the SDK's Client drives `quiesce mcp-gateway` as a child process over
// stdio; the gateway spawns a real stdio MCP server (fixtures/mcp-server.mjs) as ITS child. Checked
// against the real API and database: proxying, gating, holding while paused (and honouring the
// caller's cancellation), and a kill aborting a running call upstream (notifications/cancelled).
import { existsSync, readFileSync, rmSync } from "node:fs";
import net from "node:net";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ToolListChangedNotificationSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { prisma } from "../../lib/platform/db/prisma";
import { closePool } from "../../lib/platform/db/pool";
import { FIXTURES, makeWorld, opRow, ROOT, TSX, tempDir, until, type World } from "./support";

let w: World;
const dirs: string[] = [];
const clients: Client[] = [];
beforeAll(async () => {
  w = await makeWorld();
}, 60_000);
afterAll(async () => {
  await Promise.allSettled(clients.map((c) => c.close()));
  await w?.api.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  await closePool();
  await prisma().$disconnect();
});

interface Gw {
  client: Client;
  parentRunId: string;
  markers: string;
  stderr: () => string;
}

// Each gateway is a tsx process that spawns the fixture server: slow to boot on a shared machine.
const T = 120_000;

async function startGateway(opts: { url?: string } = {}): Promise<Gw> {
  const parent = await w.agent.createRun({ taskId: "mcp-gateway-test", harness: "custom", title: "agent using MCP" });
  const markers = tempDir("mcp-markers");
  dirs.push(markers);
  const transport = new StdioClientTransport({
    command: TSX,
    args: [
      "--conditions=react-server",
      "bin/quiesce.ts",
      "mcp-gateway",
      "--run",
      parent.runId,
      // The gateway's key is not the parent's holder: the agent passes it the parent's lease.
      "--lease",
      parent.leaseId,
      "--",
      process.execPath,
      path.join(FIXTURES, "mcp-server.mjs"),
    ],
    cwd: ROOT,
    env: { ...process.env, QUIESCE_URL: opts.url ?? w.api.url, QUIESCE_API_KEY: w.gatewayKey, FIXTURE_MARKER_DIR: markers } as Record<
      string,
      string
    >,
    stderr: "pipe",
  });
  let err = "";
  transport.stderr?.on("data", (d) => (err += d));
  const client = new Client({ name: "gateway-test", version: "1.0.0" });
  await client.connect(transport);
  clients.push(client);
  return { client, parentRunId: parent.runId, markers, stderr: () => err };
}

const upstreamCalls = (markers: string) => {
  const f = path.join(markers, "requests.jsonl");
  return existsSync(f)
    ? readFileSync(f, "utf8")
        .trim()
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l) as { name: string; args: Record<string, unknown> })
    : [];
};
const text = (r: CallToolResult) => (r.content[0] as { text: string }).text;

async function gatewayRun(parentRunId: string) {
  return until(() => prisma().run.findFirst({ where: { parentRunId, harness: "mcp" } }), "gateway child run");
}

describe("proxy and gate", { timeout: T }, () => {
  let g: Gw;
  beforeAll(async () => {
    g = await startGateway();
  }, 120_000);

  test("tools/list is the upstream's; the gateway registers itself as an mcp child run of --run", async () => {
    const { tools } = await g.client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(["announce", "crash", "echo", "fail", "slow"]);
    const run = await gatewayRun(g.parentRunId);
    expect(run).toMatchObject({ harness: "mcp", parentRunId: g.parentRunId, lifecycle: "normal" });
    expect(run.nativeSessionId).toMatch(/^mcp-gateway-/);
  });

  test("an upstream tools/list_changed reaches the client", async () => {
    let changed = 0;
    g.client.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
      changed++;
    });
    const r = (await g.client.callTool({ name: "announce", arguments: {} })) as CallToolResult;
    expect(text(r)).toBe("announced");
    await until(() => changed > 0, "tools/list_changed relayed");
  });

  test("an allowed call reaches upstream, returns its result, and is completed (succeeded / failed)", async () => {
    const r = (await g.client.callTool({ name: "echo", arguments: { text: "hello" } })) as CallToolResult;
    expect(r.isError).toBeFalsy();
    expect(text(r)).toBe("hello");
    const run = await gatewayRun(g.parentRunId);
    const ops = await prisma().operation.findMany({ where: { runId: run.id, tool: "echo" } });
    expect(ops).toHaveLength(1);
    expect(ops[0]).toMatchObject({ state: "succeeded", kind: "call" });
    expect(ops[0]!.operationId).toMatch(/^mcp-.+-\d+$/);

    const f = (await g.client.callTool({ name: "fail", arguments: {} })) as CallToolResult;
    expect(f.isError).toBe(true);
    expect(text(f)).toBe("upstream failure");
    expect(await prisma().operation.findFirst({ where: { runId: run.id, tool: "fail" } })).toMatchObject({ state: "failed" });
  });

  test("paused: the call is held (never forwarded) until resume, then runs", async () => {
    const run = await gatewayRun(g.parentRunId);
    await w.operator.pause(g.parentRunId, "hold the gateway");
    const pending = g.client.callTool({ name: "echo", arguments: { text: "after resume" } }) as Promise<CallToolResult>;
    await until(() => prisma().gateDecision.findFirst({ where: { runId: run.id, decision: "hold" } }), "a hold decision");
    expect(upstreamCalls(g.markers).some((c) => c.args.text === "after resume")).toBe(false);
    await w.operator.resume(g.parentRunId, "go on");
    const r = await pending;
    expect(text(r)).toBe("after resume");
    expect(upstreamCalls(g.markers).some((c) => c.args.text === "after resume")).toBe(true);
  });

  test("paused: a caller that cancels while held gets out, and nothing reaches upstream", async () => {
    const run = await gatewayRun(g.parentRunId);
    await w.operator.pause(g.parentRunId, "hold again");
    const before = await prisma().gateDecision.count({ where: { runId: run.id, decision: "hold" } });
    const ctrl = new AbortController();
    const pending = g.client.callTool({ name: "echo", arguments: { text: "never" } }, undefined, { signal: ctrl.signal });
    await until(async () => (await prisma().gateDecision.count({ where: { runId: run.id, decision: "hold" } })) > before, "held");
    ctrl.abort();
    await expect(pending).rejects.toThrow();
    await w.operator.resume(g.parentRunId, "resume after cancel");
    const after = (await g.client.callTool({ name: "echo", arguments: { text: "next" } })) as CallToolResult;
    expect(text(after)).toBe("next");
    expect(upstreamCalls(g.markers).some((c) => c.args.text === "never")).toBe(false);
  });

  test("a caller that cancels a RUNNING call: notifications/cancelled upstream, recorded aborted_unknown", async () => {
    const ctrl = new AbortController();
    const pending = g.client.callTool({ name: "slow", arguments: { ms: 600_000, marker: "c1" } }, undefined, {
      signal: ctrl.signal,
      timeout: 600_000,
    });
    await until(() => existsSync(path.join(g.markers, "c1.started")), "the slow call to start upstream");
    ctrl.abort();
    await expect(pending).rejects.toThrow();
    await until(() => existsSync(path.join(g.markers, "c1.cancelled")), "upstream cancellation");
    const run = await gatewayRun(g.parentRunId);
    const op = await until(async () => {
      const o = await prisma().operation.findFirst({ where: { runId: run.id, tool: "slow" } });
      return o?.state === "aborted_unknown" ? o : null;
    }, "aborted_unknown");
    expect(op.outcomeDetail).toMatchObject({ harness: "mcp", abortedBy: "caller" });
    expect(existsSync(path.join(g.markers, "c1.done"))).toBe(false);
  });
});

describe("fail closed", { timeout: T }, () => {
  test("the upstream dies mid-call: the outcome is unknown (aborted_unknown) and the gateway exits", async () => {
    const g = await startGateway();
    let closed = false;
    g.client.onclose = () => {
      closed = true;
    };
    await expect(g.client.callTool({ name: "crash", arguments: {} })).rejects.toThrow();
    const run = await gatewayRun(g.parentRunId);
    const op = await until(async () => {
      const o = await prisma().operation.findFirst({ where: { runId: run.id, tool: "crash" } });
      return o?.state === "aborted_unknown" ? o : null;
    }, "aborted_unknown after the upstream died");
    expect(op.kind).toBe("call");
    await until(() => closed, "the gateway to exit");
  });

  test("control plane unreachable: every call is refused with isError and nothing reaches upstream; tools/list still works", async () => {
    const port = await closedPort();
    const g = await startGateway({ url: `http://127.0.0.1:${port}` });
    expect((await g.client.listTools()).tools).toHaveLength(5);
    const r = (await g.client.callTool({ name: "echo", arguments: { text: "x" } })) as CallToolResult;
    expect(r.isError).toBe(true);
    expect(text(r)).toMatch(/Quiesce denied echo: control_plane_unavailable/);
    expect(upstreamCalls(g.markers)).toEqual([]);
  });
});

describe("kill", { timeout: T }, () => {
  test("a running call is aborted upstream (notifications/cancelled), answered as aborted, recorded as aborted_unknown; later calls are denied", async () => {
    const g = await startGateway();
    const pending = g.client.callTool({ name: "slow", arguments: { ms: 600_000, marker: "k1" } }, undefined, {
      timeout: 600_000,
    }) as Promise<CallToolResult>;
    await until(() => existsSync(path.join(g.markers, "k1.started")), "the slow call to start upstream");
    const run = await gatewayRun(g.parentRunId);
    const op = await prisma().operation.findFirstOrThrow({ where: { runId: run.id, tool: "slow" } });
    expect(op.state).toBe("running");

    const { barrierId } = await w.operator.kill(g.parentRunId, "stop the MCP agent");
    const r = await pending;
    expect(r.isError).toBe(true);
    expect(text(r)).toMatch(/aborted.*outcome is UNKNOWN/);
    expect(r._meta?.["dev.quiesce/gate"]).toMatchObject({ decision: "aborted", operationId: op.operationId });
    // The upstream saw the cancellation and never produced the effect.
    await until(() => existsSync(path.join(g.markers, "k1.cancelled")), "upstream cancellation");
    expect(existsSync(path.join(g.markers, "k1.done"))).toBe(false);
    // The report reached the barrier as the gateway's claim: aborted, outcome unknown.
    await until(
      async () => prisma().operationClaim.findFirst({ where: { operationId: op.id, outcome: "aborted_unknown" } }),
      "the gateway's claim of an aborted call",
    );
    const settlement = await prisma().settlement.findFirstOrThrow({ where: { barrierId, operationId: op.id } });
    expect(settlement.stateAtBarrier).toBe("running");
    expect(await prisma().gateDecision.findFirst({ where: { operationId: op.operationId, source: "complete" } })).toMatchObject({
      decision: "deny",
    });

    const later = (await g.client.callTool({ name: "echo", arguments: { text: "after kill" } })) as CallToolResult;
    expect(later.isError).toBe(true);
    expect(text(later)).toMatch(/Quiesce denied echo: .*(killed|parent)/);
    expect(upstreamCalls(g.markers).some((c) => c.args.text === "after kill")).toBe(false);
  });

  test("a call that finished before the kill keeps its recorded outcome (never rewritten to unknown)", async () => {
    const g = await startGateway();
    const r = (await g.client.callTool({ name: "slow", arguments: { ms: 10, marker: "quick" } })) as CallToolResult;
    expect(text(r)).toBe("done quick");
    const run = await gatewayRun(g.parentRunId);
    await w.operator.kill(g.parentRunId, "after the fact");
    const op = await prisma().operation.findFirstOrThrow({ where: { runId: run.id, tool: "slow" } });
    expect(op.state).toBe("succeeded");
    expect(await opRow(w.teamId, op.operationId)).toMatchObject({ state: "succeeded" });
  });
});

function closedPort(): Promise<number> {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.listen(0, "127.0.0.1", () => {
      const port = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(port));
    });
  });
}
