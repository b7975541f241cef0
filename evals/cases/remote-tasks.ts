// Long-running remote work settled from the task the remote side holds (docs/design/mcp-tasks.md): an MCP
// server with tasks (the test fixture written with the official SDK, and its 2026-07-28 side written from
// the specification) behind `quiesce mcp-gateway`, and an A2A agent built with @a2a-js/sdk behind
// `quiesce a2a-gateway`, each its own process; the eval stack's barrier engine settles through providers
// of kind mcp / a2a. "observed" is the settlement the barrier recorded (or what the server received).
import { existsSync, readFileSync } from "node:fs";
import { mkdtemp } from "node:fs/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CallToolResultSchema, CreateTaskResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { prisma } from "../../lib/platform/db/prisma";
import { newId } from "../../lib/platform/ids";
import { createProvider } from "../../lib/modules/stop";
import { barrierView, check, links, newRun, settlementOf, waitForReceipt } from "../../lib/drill/support";
import type { Check, CaseOutcome } from "../../lib/drill/types";
import { ensureClient } from "../../test/adapters/real/clients";
import { freePort } from "../support/ports";
import { spawnCli, spawnProc, waitUntil, type Proc } from "../support/proc";
import type { Stack } from "../support/stack";
import type { EvalCase } from "./types";

const FIXTURES = path.resolve(import.meta.dirname, "../../test/adapters/fixtures");

/** A scene: its processes, stopped at the end whatever happened. */
class Scene {
  readonly procs: Proc[] = [];
  readonly closers: (() => Promise<unknown>)[] = [];
  constructor(
    readonly stack: Stack,
    readonly dir: string,
  ) {}
  static async open(stack: Stack, name: string) {
    return new Scene(stack, await mkdtemp(path.join(stack.scratchDir, `${name}-`)));
  }
  async spawn(
    name: string,
    cmd: string,
    args: string[],
    env: Record<string, string>,
    ready: RegExp,
  ): Promise<{ proc: Proc; match: string }> {
    const proc = spawnProc(`${name}-${this.stack.tag}`, cmd, args, { env, logDir: this.stack.logDir });
    this.procs.push(proc);
    const m = await waitUntil(
      `${name} to be ready`,
      async () => {
        if (!proc.alive()) throw new Error(`${name} exited:\n${proc.tail()}`);
        return ready.exec(proc.tail(200));
      },
      120_000,
      100,
    );
    return { proc, match: m[1] ?? m[0] };
  }
  async close() {
    await Promise.allSettled(this.closers.map((c) => c()));
    await Promise.allSettled(this.procs.map((p) => p.stop("SIGTERM", 5000)));
  }
  messages(file = "messages.jsonl"): Record<string, unknown>[] {
    const f = path.join(this.dir, file);
    return existsSync(f)
      ? readFileSync(f, "utf8")
          .trim()
          .split("\n")
          .map((l) => JSON.parse(l) as Record<string, unknown>)
      : [];
  }
  marker(name: string) {
    return existsSync(path.join(this.dir, name));
  }
}

async function providerRow(stack: Stack, kind: "mcp" | "a2a", endpoint: string, o: { statusUrl?: string; deadlineMs?: number } = {}) {
  const name = `${kind}-${newId("prov")}`;
  // The registration path an admin's CLI takes (the servers are on 127.0.0.1, which the API would refuse).
  await createProvider(
    { type: "system", name: "evals" },
    { name, kind, url: endpoint, statusUrl: o.statusUrl, timeoutMs: 3000, settleDeadlineMs: o.deadlineMs ?? 15_000, quietPeriodSeconds: 0 },
    stack.fx.main.teamId,
  );
  return name;
}

/** An effect check that answers "absent, final" — the system of record saw no effect. */
async function effectCheck(scene: Scene): Promise<string> {
  const srv = http.createServer((_q, r) =>
    r.writeHead(200, { "content-type": "application/json" }).end('{"effect":"absent","final":true}'),
  );
  await new Promise<void>((r) => srv.listen(0, "127.0.0.1", r));
  scene.closers.push(() => new Promise((r) => srv.close(r)));
  return `http://127.0.0.1:${(srv.address() as AddressInfo).port}/effect`;
}

async function mcpServer(scene: Scene, env: Record<string, string> = {}) {
  const port = await freePort();
  const s = await scene.spawn(
    "mcp-task-server",
    process.execPath,
    [path.join(FIXTURES, "mcp-task-server.mjs"), "http", String(port)],
    { FIXTURE_MARKER_DIR: scene.dir, ...env },
    /listening on port/,
  );
  return { url: `http://127.0.0.1:${port}/mcp`, proc: s.proc };
}

/** The MCP gateway over Streamable HTTP both ways, under a fresh run; the eval process is its client. */
async function mcpGateway(scene: Scene, upstreamUrl: string, providerName: string) {
  const ctx = scene.stack.drillContext();
  const run = await newRun(ctx, { title: "agent using a remote MCP server with tasks" });
  const g = spawnCli(
    `mcp-gateway-${scene.stack.tag}`,
    [
      "mcp-gateway",
      "--run",
      run.runId,
      "--lease",
      run.leaseId,
      "--provider",
      providerName,
      "--listen",
      "127.0.0.1:0",
      "--upstream-url",
      upstreamUrl,
    ],
    {
      env: { ...scene.stack.baseEnv(), QUIESCE_URL: scene.stack.web.url, QUIESCE_API_KEY: scene.stack.fx.main.keys.agent! },
      logDir: scene.stack.logDir,
    },
  );
  scene.procs.push(g);
  const m = await waitUntil(
    "the MCP gateway to listen",
    async () => {
      if (!g.alive()) throw new Error(`mcp-gateway exited:\n${g.tail()}`);
      return /serving MCP over Streamable HTTP at (\S+)/.exec(g.tail(50));
    },
    120_000,
    100,
  );
  const client = new Client({ name: "quiesce-evals", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(m[1]!)));
  scene.closers.unshift(() => client.close());
  return { client, run, proc: g };
}

/** The operation of the gateway's child run, once the task id is recorded on it. */
async function recordedOperation(parentRunId: string, tool: string) {
  return waitUntil(
    "the task id recorded on the operation",
    async () => {
      const o = await prisma().operation.findFirst({ where: { tool, run: { parentRunId } } });
      return o?.providerJobId ? o : null;
    },
    60_000,
    100,
  );
}

async function killAndSettle(scene: Scene, runId: string, operationId: string, reason: string) {
  const ctx = scene.stack.drillContext();
  const { barrierId } = await ctx.operator.kill(runId, reason);
  const receipt = await waitForReceipt(ctx, ctx.operator, barrierId);
  const view = await barrierView(ctx.operator, barrierId);
  const s = settlementOf(view, operationId);
  const row = await prisma().settlement.findFirst({ where: { barrierId, operation: { operationId } } });
  return { barrierId, receipt, view, s, reason: row?.settledReason ?? "" };
}

const outcome = (observed: string, checks: Check[], scene: Scene, ids: { runId: string; barrierId?: string }, facts = {}): CaseOutcome => ({
  observed,
  checks,
  evidence: links(scene.stack.drillContext(), ids),
  facts: { dir: scene.dir, ...facts },
});

async function inScene(stack: Stack, name: string, body: (s: Scene) => Promise<CaseOutcome>): Promise<CaseOutcome> {
  const scene = await Scene.open(stack, name);
  try {
    return await body(scene);
  } finally {
    await scene.close();
  }
}

export const mcpTaskCancelledThenVerified: EvalCase = {
  name: "mcp_task_cancelled_then_verified",
  seed: "004",
  expected: "cancelled_without_effect",
  summary:
    "an MCP tool runs as a task (2025-11-25) when its run is killed: the gateway sends tasks/cancel, the engine reads tasks/get 'cancelled' and the system of record's effect check says absent — cancelled only with both",
  needs: [],
  run: (stack) =>
    inScene(stack, "mcp-task-cancel", async (scene) => {
      const up = await mcpServer(scene, { FIXTURE_NO_2026: "1" });
      const provider = await providerRow(stack, "mcp", up.url, { statusUrl: await effectCheck(scene) });
      const g = await mcpGateway(scene, up.url, provider);
      const { task } = await g.client.request(
        { method: "tools/call", params: { name: "work", arguments: { ms: 600_000, marker: "e1" }, task: { ttl: 600_000 } } },
        CreateTaskResultSchema,
      );
      const op = await recordedOperation(g.run.runId, "work");
      const k = await killAndSettle(scene, g.run.runId, op.operationId, "eval: stop a running MCP task");
      return outcome(
        k.s?.settledState ?? "unsettled",
        [
          check("the task id is recorded on the operation", op.providerJobId === task.taskId, {
            recorded: op.providerJobId,
            task: task.taskId,
          }),
          check(
            "tasks/cancel reached the server",
            scene.messages().some((m) => m.received === "tasks/cancel"),
            null,
          ),
          check("the task's effect never happened", !scene.marker("e1.done") && scene.marker("e1.cancelled")),
          check("the receipt names the provider's check", k.s?.effectObserved === "absent", k.s),
        ],
        scene,
        { runId: g.run.runId, barrierId: k.barrierId },
        { taskId: task.taskId, settledReason: k.reason },
      );
    }),
};

export const mcpTaskCompletesDuringCancel: EvalCase = {
  name: "mcp_task_completes_during_cancel",
  seed: "004",
  expected: "completed_and_verified",
  summary:
    "the server acknowledges tasks/cancel but the task completes anyway (cancellation is cooperative): the engine reads 'completed' and records the effect with the task id and the result's sha256 — never 'cancelled'",
  needs: [],
  run: (stack) =>
    inScene(stack, "mcp-task-completes", async (scene) => {
      const up = await mcpServer(scene, { FIXTURE_NO_2026: "1" });
      const provider = await providerRow(stack, "mcp", up.url);
      const g = await mcpGateway(scene, up.url, provider);
      const { task } = await g.client.request(
        { method: "tools/call", params: { name: "stubborn", arguments: { ms: 2500, marker: "e2" }, task: { ttl: 600_000 } } },
        CreateTaskResultSchema,
      );
      const op = await recordedOperation(g.run.runId, "stubborn");
      const k = await killAndSettle(scene, g.run.runId, op.operationId, "eval: stop a task that will complete anyway");
      const receipt = await prisma().effectReceipt.findFirst({ where: { operation: { operationId: op.operationId } } });
      return outcome(
        k.s?.settledState ?? "unsettled",
        [
          check("the effect happened at the server", scene.marker("e2.done")),
          check(
            "the effect receipt is the task id with the result's digest",
            receipt?.providerOperationId === task.taskId &&
              /^sha256:/.test(String((receipt?.detail as { resultDigest?: unknown })?.resultDigest)),
            receipt,
          ),
          check("the settlement says who answered", k.reason.includes(`the MCP server reported task ${task.taskId} completed`), k.reason),
        ],
        scene,
        { runId: g.run.runId, barrierId: k.barrierId },
      );
    }),
};

export const mcpTaskStatusUnavailableUnknown: EvalCase = {
  name: "mcp_task_status_unavailable_unknown",
  seed: "004",
  expected: "unknown",
  summary:
    "the MCP server holding a running task stops answering before the kill: neither tasks/cancel nor tasks/get is answered, so the task's outcome is unknown, reconciled by a named person",
  needs: [],
  run: (stack) =>
    inScene(stack, "mcp-task-gone", async (scene) => {
      const up = await mcpServer(scene, { FIXTURE_NO_2026: "1" });
      const provider = await providerRow(stack, "mcp", up.url, { deadlineMs: 2000 });
      const g = await mcpGateway(scene, up.url, provider);
      await g.client.request(
        { method: "tools/call", params: { name: "work", arguments: { ms: 600_000, marker: "e3" }, task: { ttl: 600_000 } } },
        CreateTaskResultSchema,
      );
      const op = await recordedOperation(g.run.runId, "work");
      await up.proc.stop("SIGKILL");
      const k = await killAndSettle(scene, g.run.runId, op.operationId, "eval: stop while the MCP server is gone");
      return outcome(
        k.s?.settledState ?? "unsettled",
        [
          check("a reconciliation is open with a named owner", !!k.s?.reconciliation?.assignee, k.s?.reconciliation),
          check("the receipt is stop_incomplete", k.receipt.decision === "stop_incomplete", k.receipt.decision),
        ],
        scene,
        { runId: g.run.runId, barrierId: k.barrierId },
        { settledReason: k.reason },
      );
    }),
};

export const mcp2026StreamCloseNotNotification: EvalCase = {
  name: "mcp_2026_stream_close_not_notification",
  seed: "004",
  expected: "stream_closed_no_notification",
  summary:
    "a plain tool call runs on a 2026-07-28 server over Streamable HTTP when the run is killed: the gateway cancels by closing the request's stream, as that version requires, and sends no notifications/cancelled",
  needs: [],
  run: (stack) =>
    inScene(stack, "mcp-2026", async (scene) => {
      const up = await mcpServer(scene);
      const provider = await providerRow(stack, "mcp", up.url);
      const g = await mcpGateway(scene, up.url, provider);
      const pending = g.client
        .request({ method: "tools/call", params: { name: "slow", arguments: { ms: 600_000, marker: "e4" } } }, CallToolResultSchema, {
          timeout: 600_000,
        })
        .catch((e: Error) => ({ isError: true, error: e.message }));
      await waitUntil("the call to start at the server", async () => scene.marker("e4.started"), 60_000, 100);
      const { barrierId } = await stack.drillContext().operator.kill(g.run.runId, "eval: stop a 2026-07-28 call");
      const answer = await pending;
      await waitUntil("the server to see the stream close", async () => scene.marker("e4.cancelled"), 60_000, 100);
      const seen = scene.messages();
      const closed = seen.some((m) => m.event === "stream-closed");
      const notified = seen.some((m) => m.received === "notifications/cancelled");
      return outcome(
        closed && !notified ? "stream_closed_no_notification" : `closed=${closed},notified=${notified}`,
        [
          check("the gateway negotiated 2026-07-28 with the server", /negotiated MCP 2026-07-28/.test(g.proc.tail(100))),
          check("the client was answered: aborted", (answer as { isError?: boolean }).isError === true, answer),
          check("the effect never happened", !scene.marker("e4.done")),
        ],
        scene,
        { runId: g.run.runId, barrierId },
      );
    }),
};

export const a2aTaskNotCancelableUnknown: EvalCase = {
  name: "a2a_task_not_cancelable_unknown",
  seed: "004",
  expected: "unknown",
  summary:
    "a remote A2A agent runs a task for a killed run and answers CancelTask with TaskNotCancelableError: nobody can say the work stopped, so the outcome is unknown with a named owner — never cancelled",
  needs: [],
  run: (stack) =>
    inScene(stack, "a2a-not-cancelable", async (scene) => {
      const sdk = await ensureClient("a2a");
      if (!sdk.available) return outcome(`a2a_sdk_unavailable: ${sdk.why}`, [], scene, { runId: "" });
      const port = await freePort();
      const agent = await scene.spawn(
        "a2a-agent",
        process.execPath,
        [path.join(FIXTURES, "a2a-agent.mjs"), String(port)],
        { A2A_SDK_DIR: sdk.dir, FIXTURE_MARKER_DIR: scene.dir },
        /a2a agent listening at (\S+)/,
      );
      const provider = await providerRow(stack, "a2a", agent.match, { deadlineMs: 2000 });
      const ctx = stack.drillContext();
      const run = await newRun(ctx, { title: "agent calling a remote agent" });
      const g = spawnCli(
        `a2a-gateway-${stack.tag}`,
        ["a2a-gateway", "--run", run.runId, "--lease", run.leaseId, "--upstream", agent.match, "--provider", provider],
        { env: { ...stack.baseEnv(), QUIESCE_URL: stack.web.url, QUIESCE_API_KEY: stack.fx.main.keys.agent! }, logDir: stack.logDir },
      );
      scene.procs.push(g);
      const url = (
        await waitUntil(
          "the A2A gateway to listen",
          async () => {
            if (!g.alive()) throw new Error(`a2a-gateway exited:\n${g.tail()}`);
            return /serving A2A at (\S+)/.exec(g.tail(50));
          },
          120_000,
          100,
        )
      )[1]!;
      const sent = (await (
        await fetch(url, {
          method: "POST",
          headers: { "content-type": "application/json", "a2a-version": "1.0" },
          body: JSON.stringify({
            jsonrpc: "2.0",
            id: 1,
            method: "SendMessage",
            params: {
              message: { messageId: `eval-${stack.tag}`, role: "ROLE_USER", parts: [{ text: "stubborn 600000 e5" }] },
              configuration: { returnImmediately: true },
            },
          }),
        })
      ).json()) as { result?: { task?: { id: string } } };
      const taskId = sent.result?.task?.id;
      const op = await recordedOperation(run.runId, "a2a:SendMessage");
      const k = await killAndSettle(scene, run.runId, op.operationId, "eval: stop a task the agent will not cancel");
      const cancels = scene.messages("a2a.jsonl").filter((m) => m.method === "CancelTask");
      return outcome(
        k.s?.settledState ?? "unsettled",
        [
          check("the agent's task id is recorded on the operation", !!taskId && op.providerJobId === taskId, {
            taskId,
            recorded: op.providerJobId,
          }),
          check("CancelTask reached the agent", cancels.length > 0, cancels.length),
          check("the agent refused: the cancel answer is rejected (TaskNotCancelableError)", k.s?.providerResponse === "rejected", k.s),
          check("a reconciliation is open with a named owner", !!k.s?.reconciliation?.assignee, k.s?.reconciliation),
          check("the task was not stopped", !scene.marker("e5.cancelled")),
        ],
        scene,
        { runId: run.runId, barrierId: k.barrierId },
        { settledReason: k.reason },
      );
    }),
};

export const REMOTE_TASK_CASES: EvalCase[] = [
  mcpTaskCancelledThenVerified,
  mcpTaskCompletesDuringCancel,
  mcpTaskStatusUnavailableUnknown,
  mcp2026StreamCloseNotNotification,
  a2aTaskNotCancelableUnknown,
];
