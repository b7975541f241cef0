// The A2A gateway in front of a real remote agent built with the official A2A SDK (@a2a-js/sdk, pinned,
// installed into the client cache, see real/clients.ts; fixtures/a2a-agent.mjs), settled by the barrier
// engine's a2a provider (docs/design/mcp-tasks.md): a task cancelled mid-way, one the agent answers
// TaskNotCancelableError for, and an agent that stops answering; then a v0.3 client in front of an agent
// built with the SDK's last v0.3 release (fixtures/a2a-agent-v03.mjs). Real API, database and engine.
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { prisma } from "../../lib/platform/db/prisma";
import { closePool } from "../../lib/platform/db/pool";
import { newId } from "../../lib/platform/ids";
import { runBarrierWorker } from "../../lib/modules/stop/engine/worker";
import { setTeamStopSettings } from "../../lib/modules/members/team-settings";
import { createPolicyVersion, enablePolicy } from "../../lib/modules/policy";
import { decideApproval } from "../../lib/modules/approvals";
import type { Principal } from "../../lib/platform/auth/principal";
import { makeUser } from "../support/fixtures";
import { FIXTURES, makeWorld, ROOT, stopChild, tempDir, until, type World } from "./support";
import { ensureClient, type ClientBinary } from "./real/clients";
import { freePort } from "../support/pg-local";

const T = 180_000;
let sdk: ClientBinary | null = null;
/** The SDK's last A2A v0.3 release, for a remote agent that knows only the v0.3 names. */
let sdk03: ClientBinary | null = null;
let w: World;
const children: ChildProcess[] = [];
const engineStop = new AbortController();
let engine: Promise<void> | null = null;
let effectServer: http.Server | null = null;
let effectUrl = "";

beforeAll(async () => {
  const c = await ensureClient("a2a");
  const c03 = await ensureClient("a2a03");
  if (c.available) sdk = c;
  if (c03.available) sdk03 = c03;
  if (!sdk && !sdk03) return;
  w = await makeWorld();
  await setTeamStopSettings({ type: "system", name: "a2a-test" }, w.teamId, { quietPeriodMs: 300 });
  effectServer = http.createServer((_req, res) =>
    res.writeHead(200, { "content-type": "application/json" }).end('{"effect":"absent","final":true}'),
  );
  await new Promise<void>((r) => effectServer!.listen(0, "127.0.0.1", r));
  effectUrl = `http://127.0.0.1:${(effectServer.address() as AddressInfo).port}/effect`;
  engine = runBarrierWorker({ teamId: w.teamId, signal: engineStop.signal, pollMs: 200, claimMs: 5000, localSettleMs: 500, listen: true });
}, 600_000);
afterAll(async () => {
  await Promise.allSettled(children.map((c) => stopChild(c)));
  engineStop.abort();
  await engine;
  effectServer?.close();
  if (!sdk && !sdk03) return;
  await w?.api.close();
  await closePool();
  await prisma().$disconnect();
});

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
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`${cmd} exited ${code}:\n${log}`));
    });
  });
}

async function agent(dir: string, version: "1.0" | "0.3" = "1.0") {
  const port = await freePort();
  const a = await spawnUntil(
    process.execPath,
    [path.join(FIXTURES, version === "1.0" ? "a2a-agent.mjs" : "a2a-agent-v03.mjs"), String(port)],
    { ...process.env, A2A_SDK_DIR: (version === "1.0" ? sdk : sdk03)!.dir, FIXTURE_MARKER_DIR: dir },
    /a2a agent listening at (\S+)/,
  );
  return { url: a.match, child: a.child };
}

async function provider(name: string, endpoint: string, opts: { effectCheck?: boolean; deadlineMs?: number } = {}) {
  await prisma().provider.create({
    data: {
      id: newId("prov"),
      teamId: w.teamId,
      name,
      kind: "a2a",
      endpoint,
      statusUrl: opts.effectCheck ? effectUrl : null,
      timeoutMs: 3000,
      settleDeadlineMs: opts.deadlineMs ?? 20_000,
      quietPeriodSeconds: 0,
    },
  });
}

async function gateway(upstream: string, providerName: string) {
  const parent = await w.agent.createRun({ taskId: "a2a", title: "agent calling a remote agent" });
  const g = await spawnUntil(
    process.execPath,
    [
      "bin/quiesce-adapter.mjs",
      "a2a-gateway",
      "--run",
      parent.runId,
      "--lease",
      parent.leaseId,
      "--upstream",
      upstream,
      "--provider",
      providerName,
    ],
    { ...process.env, QUIESCE_URL: w.api.url, QUIESCE_API_KEY: w.gatewayKey },
    /serving A2A at (\S+)/,
  );
  return { url: g.match, parentRunId: parent.runId, log: g.log };
}

let rpcId = 0;
async function rpc(url: string, method: string, params: Record<string, unknown>, version: "1.0" | "0.3" = "1.0") {
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...(version === "1.0" ? { "a2a-version": "1.0" } : {}) },
    body: JSON.stringify({ jsonrpc: "2.0", id: ++rpcId, method, params }),
  });
  return (await res.json()) as { result?: Record<string, unknown>; error?: { code: number; message: string; data?: unknown } };
}
const send = (url: string, text: string) =>
  rpc(url, "SendMessage", {
    message: { messageId: `m-${++rpcId}`, role: "ROLE_USER", parts: [{ text }] },
    configuration: { returnImmediately: true },
  });

const received = (dir: string) =>
  existsSync(path.join(dir, "a2a.jsonl"))
    ? readFileSync(path.join(dir, "a2a.jsonl"), "utf8")
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l) as { method: string; params: Record<string, unknown> })
    : [];

async function recorded(parentRunId: string) {
  const run = await until(() => prisma().run.findFirst({ where: { parentRunId } }), "the gateway's run");
  return until(async () => {
    const o = await prisma().operation.findFirst({ where: { runId: run.id } });
    return o?.providerJobId ? o : null;
  }, "the task id recorded");
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

describe("A2A gateway", { timeout: T }, () => {
  test("SendMessage is gated, its task recorded; a kill sends CancelTask; canceled + an effect check → cancelled_without_effect; later messages are denied", async (ctx) => {
    if (!sdk) return ctx.skip();
    const dir = tempDir("a2a");
    const a = await agent(dir);
    await provider("a2a-checked", a.url, { effectCheck: true });
    const g = await gateway(a.url, "a2a-checked");
    // The agent card names the gateway, not the agent behind it.
    const card = (await (await fetch(`${g.url}.well-known/agent-card.json`, { headers: { "a2a-version": "1.0" } })).json()) as {
      supportedInterfaces: { url: string }[];
    };
    expect(card.supportedInterfaces[0]!.url.startsWith(g.url.replace(/\/$/, ""))).toBe(true);
    const r = await send(g.url, "work 600000 a1");
    const taskId = (r.result!.task as { id: string }).id;
    const op = await recorded(g.parentRunId);
    expect(op).toMatchObject({ state: "running", providerName: "a2a-checked", providerJobId: taskId, tool: "a2a:SendMessage" });
    // GetTask is relayed.
    expect((await rpc(g.url, "GetTask", { id: taskId })).result).toMatchObject({ id: taskId, status: { state: "TASK_STATE_WORKING" } });

    const { barrierId } = await w.operator.kill(g.parentRunId, "stop the remote task");
    await until(() => existsSync(path.join(dir, "a1.cancelled")), "the agent to cancel the task");
    expect(received(dir).some((m) => m.method === "CancelTask" && m.params.id === taskId)).toBe(true);
    const s = await settled(barrierId, op.id);
    expect(s.settledState).toBe("cancelled_without_effect");
    expect(existsSync(path.join(dir, "a1.done"))).toBe(false);

    const later = await send(g.url, "work 10 never");
    expect(later.error?.message).toMatch(/Quiesce denied a2a:SendMessage/);
    expect(received(dir).some((m) => JSON.stringify(m.params).includes("never"))).toBe(false);
  });

  test("canceled with no effect check → unknown naming why", async (ctx) => {
    if (!sdk) return ctx.skip();
    const dir = tempDir("a2a");
    const a = await agent(dir);
    await provider("a2a-plain", a.url);
    const g = await gateway(a.url, "a2a-plain");
    const taskId = ((await send(g.url, "work 600000 b1")).result!.task as { id: string }).id;
    const op = await recorded(g.parentRunId);
    const { barrierId } = await w.operator.kill(g.parentRunId, "stop");
    const s = await settled(barrierId, op.id);
    expect(s.settledState).toBe("unknown");
    expect(s.settledReason).toContain(`the A2A agent reported task ${taskId} canceled at`);
    expect(s.settledReason).toContain("the agent says canceled; no effect check");
  });

  test("an agent answering TaskNotCancelableError: unknown at the deadline, with a reconciliation owner", async (ctx) => {
    if (!sdk) return ctx.skip();
    const dir = tempDir("a2a");
    const a = await agent(dir);
    await provider("a2a-stubborn", a.url, { deadlineMs: 2000 });
    const g = await gateway(a.url, "a2a-stubborn");
    await send(g.url, "stubborn 600000 c1");
    const op = await recorded(g.parentRunId);
    const { barrierId } = await w.operator.kill(g.parentRunId, "stop the stubborn task");
    const s = await settled(barrierId, op.id);
    expect(s.settledState).toBe("unknown");
    expect(s.providerResponse).toBe("rejected");
    await until(() => g.log().includes("TaskNotCancelableError"), "the gateway to log the agent's refusal");
    const rec = await prisma().reconciliation.findFirstOrThrow({ where: { operationId: op.id } });
    expect(rec.assigneeUserId).not.toBeNull();
  });

  test("an agent that stops answering: unknown (target unreachable), with a reconciliation owner", async (ctx) => {
    if (!sdk) return ctx.skip();
    const dir = tempDir("a2a");
    const a = await agent(dir);
    await provider("a2a-gone", a.url, { deadlineMs: 1500 });
    const g = await gateway(a.url, "a2a-gone");
    await send(g.url, "work 600000 d1");
    const op = await recorded(g.parentRunId);
    await stopChild(a.child);
    const { barrierId } = await w.operator.kill(g.parentRunId, "stop; the agent is gone");
    const s = await settled(barrierId, op.id);
    expect(s.settledState).toBe("unknown");
    expect(s.settledReason).toMatch(/unknown: (target_unreachable|provider_status_unavailable)/);
    expect((await prisma().reconciliation.findFirstOrThrow({ where: { operationId: op.id } })).assigneeUserId).not.toBeNull();
  });

  test("the message is the gate's arguments: the approval shows it, and a yes lets exactly that message through", async (ctx) => {
    if (!sdk) return ctx.skip();
    const dir = tempDir("a2a-approval");
    const a = await agent(dir);
    await provider("a2a-approval", a.url);
    const g = await gateway(a.url, "a2a-approval");
    // A rule for this gateway's run tree only: the other tests' gateways are untouched.
    const u = await makeUser(w.teamId, "admin");
    const admin: Principal = { type: "user", userId: u.userId, email: u.email, teamId: w.teamId, role: "admin" };
    const v = await createPolicyVersion(admin, {
      rules: [{ name: "a2a-needs-a-yes", tool: "a2a:*", subtree: g.parentRunId, effect: "require_approval" }],
    });
    await enablePolicy(admin, { version: v.version, reason: "a2a approval test" });
    try {
      const answer = send(g.url, "work 10 approved-one");
      const approval = await until(
        () => prisma().approval.findFirst({ where: { teamId: w.teamId, tool: "a2a:SendMessage", state: "pending" } }),
        "the approval card",
      );
      expect(JSON.stringify(approval.arguments)).toContain("work 10 approved-one");
      expect(approval.argsDigest).toMatch(/^[0-9a-f]{64}$/);
      expect(received(dir).some((m) => JSON.stringify(m.params).includes("approved-one"))).toBe(false);
      await decideApproval(admin, approval.id, { decision: "approve" });
      const r = await answer;
      expect(r.error).toBeUndefined();
      expect(r.result?.task).toBeDefined();
      expect(received(dir).some((m) => JSON.stringify(m.params).includes("approved-one"))).toBe(true);
    } finally {
      await enablePolicy(admin, { version: null, reason: "a2a approval test done" });
    }
  });

  test("SendStreamingMessage: the task id is read from the stream, and a kill cancels the task while the stream is open", async (ctx) => {
    if (!sdk) return ctx.skip();
    const dir = tempDir("a2a");
    const a = await agent(dir);
    await provider("a2a-stream", a.url, { effectCheck: true });
    const g = await gateway(a.url, "a2a-stream");
    const res = await fetch(g.url, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "text/event-stream", "a2a-version": "1.0" },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 99,
        method: "SendStreamingMessage",
        params: { message: { messageId: "stream-1", role: "ROLE_USER", parts: [{ text: "work 600000 e1" }] } },
      }),
    });
    expect(res.headers.get("content-type")).toContain("text/event-stream");
    const body = res.text();
    const op = await recorded(g.parentRunId);
    expect(op.tool).toBe("a2a:SendStreamingMessage");
    const { barrierId } = await w.operator.kill(g.parentRunId, "stop the streamed task");
    await until(() => existsSync(path.join(dir, "e1.cancelled")), "the agent to cancel the task");
    expect(await body).toContain("TASK_STATE_CANCELED");
    expect((await settled(barrierId, op.id)).settledState).toBe("cancelled_without_effect");
  });

  test("a task that completes although the agent was asked to cancel it → completed_and_verified, the task id on the effect receipt", async (ctx) => {
    if (!sdk) return ctx.skip();
    const dir = tempDir("a2a");
    const a = await agent(dir);
    await provider("a2a-completes", a.url);
    const g = await gateway(a.url, "a2a-completes");
    const taskId = ((await send(g.url, "stubborn 2500 f1")).result!.task as { id: string }).id;
    const op = await recorded(g.parentRunId);
    const { barrierId } = await w.operator.kill(g.parentRunId, "too late to stop");
    const s = await settled(barrierId, op.id);
    expect(s.settledState).toBe("completed_and_verified");
    expect(s.settledReason).toContain(`the A2A agent reported task ${taskId} completed`);
    const receipt = await prisma().effectReceipt.findFirstOrThrow({ where: { operationId: op.id } });
    expect(receipt.providerOperationId).toBe(taskId);
    expect(existsSync(path.join(dir, "f1.done"))).toBe(true);
  });

  test("HTTP+JSON: POST …/message:send is gated and its task recorded; a kill sends POST …/tasks/{id}:cancel", async (ctx) => {
    if (!sdk) return ctx.skip();
    const dir = tempDir("a2a");
    const a = await agent(dir);
    await provider("a2a-rest", a.url, { effectCheck: true });
    const g = await gateway(a.url, "a2a-rest");
    const res = await fetch(`${g.url}rest/message:send`, {
      method: "POST",
      headers: { "content-type": "application/json", "a2a-version": "1.0" },
      body: JSON.stringify({
        message: { messageId: "rest-1", role: "ROLE_USER", parts: [{ text: "work 600000 r1" }] },
        configuration: { returnImmediately: true },
      }),
    });
    expect(res.status).toBe(200);
    const taskId = ((await res.json()) as { task: { id: string } }).task.id;
    const op = await recorded(g.parentRunId);
    expect(op).toMatchObject({ tool: "a2a:message:send", providerJobId: taskId });
    const { barrierId } = await w.operator.kill(g.parentRunId, "stop the REST task");
    await until(() => existsSync(path.join(dir, "r1.cancelled")), "the agent to cancel the task");
    expect(received(dir).some((m) => (m as { path?: string }).path === `/rest/tasks/${taskId}:cancel`)).toBe(true);
    expect((await settled(barrierId, op.id)).settledState).toBe("cancelled_without_effect");
    const denied = await fetch(`${g.url}rest/message:send`, {
      method: "POST",
      headers: { "content-type": "application/json", "a2a-version": "1.0" },
      body: JSON.stringify({ message: { messageId: "rest-2", role: "ROLE_USER", parts: [{ text: "work 10 never" }] } }),
    });
    expect(denied.status).toBe(403);
  });
});

describe("A2A v0.3: a client and a remote agent that speak only the v0.3 names", { timeout: T }, () => {
  const send03 = (url: string, text: string) =>
    rpc(
      url,
      "message/send",
      {
        message: { kind: "message", messageId: `m-${++rpcId}`, role: "user", parts: [{ kind: "text", text }] },
        configuration: { blocking: false },
      },
      "0.3",
    );

  test("message/send is gated and its task recorded; a kill sends tasks/cancel; the engine, told GetTask is not found, reads tasks/get → cancelled_without_effect", async (ctx) => {
    if (!sdk03) return ctx.skip();
    const dir = tempDir("a2a03");
    const a = await agent(dir, "0.3");
    await provider("a2a03-checked", a.url, { effectCheck: true });
    const g = await gateway(a.url, "a2a03-checked");
    const r = await send03(g.url, "work 600000 v1");
    expect(r.result).toMatchObject({ kind: "task" });
    const taskId = r.result!.id as string;
    const op = await recorded(g.parentRunId);
    expect(op).toMatchObject({ state: "running", providerJobId: taskId, tool: "a2a:message/send" });
    expect((await rpc(g.url, "tasks/get", { id: taskId }, "0.3")).result).toMatchObject({ id: taskId, status: { state: "working" } });

    const { barrierId } = await w.operator.kill(g.parentRunId, "stop the v0.3 task");
    await until(() => existsSync(path.join(dir, "v1.cancelled")), "the agent to cancel the task");
    const s = await settled(barrierId, op.id);
    expect(s.settledState).toBe("cancelled_without_effect");
    const methods = received(dir).map((m) => m.method);
    expect(methods).toContain("tasks/cancel");
    // The engine's provider asks in v1.0 first; the agent answers "method not found" and is asked in v0.3.
    expect(methods).toContain("GetTask");
    expect(methods.lastIndexOf("tasks/get")).toBeGreaterThan(methods.indexOf("GetTask"));
    expect(existsSync(path.join(dir, "v1.done"))).toBe(false);
    expect((await send03(g.url, "work 10 never")).error?.message).toMatch(/Quiesce denied a2a:message\/send/);
  });

  test("tasks/cancel answered TaskNotCancelableError (-32002): unknown at the deadline, with a reconciliation owner", async (ctx) => {
    if (!sdk03) return ctx.skip();
    const dir = tempDir("a2a03");
    const a = await agent(dir, "0.3");
    await provider("a2a03-stubborn", a.url, { deadlineMs: 2000 });
    const g = await gateway(a.url, "a2a03-stubborn");
    await send03(g.url, "stubborn 600000 v2");
    const op = await recorded(g.parentRunId);
    const { barrierId } = await w.operator.kill(g.parentRunId, "stop the stubborn v0.3 task");
    const s = await settled(barrierId, op.id);
    expect(s.settledState).toBe("unknown");
    expect(s.providerResponse).toBe("rejected");
    await until(() => g.log().includes("TaskNotCancelableError"), "the gateway to log the agent's refusal");
    expect(existsSync(path.join(dir, "v2.cancelled"))).toBe(false);
    expect((await prisma().reconciliation.findFirstOrThrow({ where: { operationId: op.id } })).assigneeUserId).not.toBeNull();
  });
});
