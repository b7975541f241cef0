// Approvals and budgets through the adapters, against the real API and database: a team policy makes
// calls wait for a person's yes (or refuses them); the person answers through the approvals API, and
// each adapter, run as its own process as a harness would start it, holds the call and then goes on or
// refuses — the Claude Code hook (and its timeout into deny or ask), the MCP gateway and the Codex bridge.
import { spawn } from "node:child_process";
import { existsSync, readFileSync, rmSync } from "node:fs";
import path from "node:path";
import { createInterface } from "node:readline";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { prisma } from "../../lib/platform/db/prisma";
import { closePool } from "../../lib/platform/db/pool";
import { createPolicyVersion, enablePolicy } from "../../lib/modules/policy";
import type { Principal } from "../../lib/platform/auth/principal";
import { makeUser } from "../support/fixtures";
import { FIXTURES, makeWorld, opRow, ROOT, runProcess, stopChild, tempDir, TSX, until, type World } from "./support";

let w: World;
let stateDir: string;
const dirs: string[] = [];
const clients: Client[] = [];
const children: ReturnType<typeof spawn>[] = [];
beforeAll(async () => {
  w = await makeWorld();
  stateDir = tempDir("approvals-hook");
  const u = await makeUser(w.teamId, "admin");
  const admin: Principal = { type: "user", userId: u.userId, email: u.email, teamId: w.teamId, role: "admin" };
  const v = await createPolicyVersion(admin, {
    rules: [
      { name: "no-drops", tool: "DropTable", effect: "deny" },
      { name: "deploys-need-a-yes", tool: "Deploy", effect: "require_approval", approval: { ttlSeconds: 600 } },
      { name: "echo-needs-a-yes", tool: "echo", effect: "require_approval" },
      { name: "commands-need-a-yes", tool: "codex.commandExecution", effect: "require_approval" },
      { name: "one-spend", tool: "Spend", effect: "budget", budget: { unit: "calls", limit: 1 } },
    ],
  });
  await enablePolicy(admin, { version: v.version, reason: "adapter tests" });
}, 60_000);
afterAll(async () => {
  await Promise.allSettled([...clients.map((c) => c.close()), ...children.map((c) => stopChild(c))]);
  await w?.api.close();
  for (const d of [stateDir, ...dirs]) if (d) rmSync(d, { recursive: true, force: true });
  await closePool();
  await prisma().$disconnect();
});

/** The approval the gate created for an operation, once it exists. */
const approvalOf = (operationId: string) =>
  until(
    () => prisma().approval.findFirst({ where: { teamId: w.teamId, operationId }, orderBy: { createdAt: "desc" } }),
    `approval of ${operationId}`,
  );

describe("Claude Code hook", { timeout: 120_000 }, () => {
  const HOOK = path.join(ROOT, "bin/quiesce-hook.mjs");
  let seq = 0;
  const session = `sess-approvals-${process.pid}-${Date.now().toString(36)}`;
  const toolUseId = () => `toolu_apr_${Date.now().toString(36)}${++seq}`;
  const pre = (id: string, tool: string, tool_input: unknown = { target: "preview" }) => ({
    session_id: session,
    transcript_path: `/tmp/${session}.jsonl`,
    cwd: "/work/demo",
    hook_event_name: "PreToolUse",
    tool_name: tool,
    tool_input,
    tool_use_id: id,
  });
  const hook = async (input: unknown, over: Record<string, string> = {}) => {
    const r = await runProcess(process.execPath, [HOOK, "claude-code"], JSON.stringify(input), {
      ...process.env,
      QUIESCE_URL: w.api.url,
      QUIESCE_API_KEY: w.agentKey,
      QUIESCE_HOOK_STATE_DIR: stateDir,
      QUIESCE_HOOK_TIMEOUT_MS: "30000",
      QUIESCE_HOOK_APPROVAL_WAIT_MS: "60000",
      ...over,
    });
    return { ...r, json: r.stdout.trim() ? (JSON.parse(r.stdout) as Record<string, any>) : null };
  };

  beforeAll(async () => {
    const r = await hook({ ...pre("x", "x"), hook_event_name: "SessionStart", source: "startup" });
    expect(r.code).toBe(0);
  });

  test("a call that needs a yes is held, named to the user, and goes ahead once a person approves through the API", async () => {
    const id = toolUseId();
    const running = hook(pre(id, "Deploy", { target: "preview", token: "t" }));
    const a = await approvalOf(id);
    expect(a).toMatchObject({ state: "pending", tool: "Deploy", arguments: { target: "preview", token: "t" } });
    const decided = await w.operator.decideApproval(a.id, { decision: "approve", note: "preview is fine" });
    expect(decided.state).toBe("approved");
    const r = await running;
    expect(r).toMatchObject({ code: 0, stdout: "" });
    expect(r.stderr).toContain(`approval ${a.id}`);
    expect(r.stderr).toContain("goes ahead");
    expect(await opRow(w.teamId, id)).toMatchObject({ state: "running", tool: "Deploy" });
    expect((await w.agent.getApproval(a.id)).usedAt).not.toBeNull();
  });

  test("a person's no is a deny in words naming the approval", async () => {
    const id = toolUseId();
    const running = hook(pre(id, "Deploy"));
    const a = await approvalOf(id);
    await w.operator.decideApproval(a.id, { decision: "deny", note: "not now" });
    const r = await running;
    expect(r.code).toBe(0);
    expect(r.json!.hookSpecificOutput).toMatchObject({ permissionDecision: "deny" });
    expect(r.json!.hookSpecificOutput.permissionDecisionReason).toContain(`a person denied this call (approval ${a.id})`);
    expect(r.json!.continue).toBeUndefined(); // the call is refused; the session goes on
  });

  test("nobody answers in time: deny (the default) or ask the person at the terminal, naming the approval", async () => {
    const denied = toolUseId();
    const r = await hook(pre(denied, "Deploy"), { QUIESCE_HOOK_APPROVAL_WAIT_MS: "1500" });
    const a = await approvalOf(denied);
    expect(r.code).toBe(0);
    expect(r.json!.hookSpecificOutput).toMatchObject({ permissionDecision: "deny" });
    expect(r.json!.hookSpecificOutput.permissionDecisionReason).toContain(`approval ${a.id} was not answered within 2 s`);
    expect(r.json!.systemMessage).toContain(a.id);
    expect(await opRow(w.teamId, denied)).toBeNull(); // a hold records no operation

    const asked = toolUseId();
    const q = await hook(pre(asked, "Deploy"), { QUIESCE_HOOK_APPROVAL_WAIT_MS: "1000", QUIESCE_HOOK_APPROVAL_TIMEOUT: "ask" });
    const b = await approvalOf(asked);
    expect(q.json!.hookSpecificOutput).toMatchObject({ permissionDecision: "ask" });
    expect(q.json!.hookSpecificOutput.permissionDecisionReason).toContain(`approval ${b.id}`);
    // The user let it run: Quiesce never admitted it, so its report has nothing to record (and blocks nothing).
    const post = await hook({ ...pre(asked, "Deploy"), hook_event_name: "PostToolUse", tool_response: {} });
    expect(post.code).toBe(0);
    expect(post.stderr).toContain("not admitted");
  });

  test("a policy deny and an exhausted budget are denies in words", async () => {
    const drop = await hook(pre(toolUseId(), "DropTable"));
    expect(drop.json!.hookSpecificOutput.permissionDecisionReason).toContain("the team's policy does not allow this call");
    expect((await hook(pre(toolUseId(), "Spend"))).stdout).toBe("");
    const spent = await hook(pre(toolUseId(), "Spend"));
    expect(spent.json!.hookSpecificOutput.permissionDecisionReason).toContain('a spending budget is exhausted (budget "one-spend")');
  });
});

describe("MCP gateway", { timeout: 120_000 }, () => {
  /** The gateway as an MCP client config starts it (as in mcp-gateway.test.ts), with its approval wait. */
  async function startGateway(approvalWaitMs: number) {
    const parent = await w.agent.createRun({ taskId: "mcp-approvals-test", harness: "custom", title: "agent using MCP" });
    const markers = tempDir("mcp-approvals");
    dirs.push(markers);
    const transport = new StdioClientTransport({
      command: TSX,
      args: [
        "--conditions=react-server",
        "bin/quiesce.ts",
        "mcp-gateway",
        "--run",
        parent.runId,
        "--lease",
        parent.leaseId,
        "--",
        process.execPath,
        path.join(FIXTURES, "mcp-server.mjs"),
      ],
      cwd: ROOT,
      env: {
        ...process.env,
        QUIESCE_URL: w.api.url,
        QUIESCE_API_KEY: w.gatewayKey,
        FIXTURE_MARKER_DIR: markers,
        QUIESCE_APPROVAL_WAIT_MS: String(approvalWaitMs),
      } as Record<string, string>,
      stderr: "pipe",
    });
    let stderr = "";
    transport.stderr?.on("data", (d) => (stderr += d));
    const client = new Client({ name: "approvals-test", version: "1.0.0" });
    await client.connect(transport);
    clients.push(client);
    const upstream = () => {
      const f = path.join(markers, "requests.jsonl");
      return existsSync(f) ? readFileSync(f, "utf8").trim().split("\n").filter(Boolean) : [];
    };
    return { client, upstream, stderr: () => stderr };
  }
  const text = (r: CallToolResult) => (r.content[0] as { text: string }).text;
  const pendingEcho = () =>
    until(
      () =>
        prisma().approval.findFirst({
          where: { teamId: w.teamId, tool: "echo", state: "pending", usedAt: null },
          orderBy: { createdAt: "desc" },
        }),
      "a pending approval for echo",
    );

  test("a tools/call awaiting approval is held (progress names the approval), then forwarded once a person approves", async () => {
    const g = await startGateway(120_000);
    const messages: string[] = [];
    const call = g.client.callTool({ name: "echo", arguments: { text: "ship it" } }, undefined, {
      timeout: 110_000,
      onprogress: (p) => void messages.push(p.message ?? ""),
    });
    const a = await pendingEcho();
    expect(a.arguments).toEqual({ text: "ship it" });
    await until(() => messages.some((m) => m.includes(a.id)), "progress naming the approval");
    expect(g.upstream()).toEqual([]); // nothing reached the upstream while held
    await w.operator.decideApproval(a.id, { decision: "approve" });
    const r = (await call) as CallToolResult;
    expect(r.isError).toBeFalsy();
    expect(text(r)).toBe("ship it");
    expect(await opRow(w.teamId, a.operationId)).toMatchObject({ state: "succeeded", tool: "echo" });
    expect(g.stderr()).toContain(`approval ${a.id}`);

    // A no: a tool error naming the approval; nothing reaches the upstream.
    const denied = g.client.callTool({ name: "echo", arguments: { text: "again" } });
    const b = await pendingEcho();
    await w.operator.decideApproval(b.id, { decision: "deny" });
    const d = (await denied) as CallToolResult;
    expect(d.isError).toBe(true);
    expect(text(d)).toContain(`a person denied this call (approval ${b.id})`);
    expect(d._meta?.["dev.quiesce/gate"]).toMatchObject({ decision: "deny", reason: "approval_denied", approvalId: b.id });
    expect(g.upstream()).toHaveLength(1);
  });

  test("nobody answers within the gateway's wait: refused with a clear text, never forwarded", async () => {
    const g = await startGateway(1500);
    const r = (await g.client.callTool({ name: "echo", arguments: { text: "late" } })) as CallToolResult;
    expect(r.isError).toBe(true);
    expect(text(r)).toMatch(
      /^Quiesce denied echo: this call waits for a person's approval \(approval apr_\S+\) \(nobody answered within \d+ s/,
    );
    expect(r._meta?.["dev.quiesce/gate"]).toMatchObject({ reason: "awaiting_approval" });
    expect(g.upstream()).toEqual([]);
  });
});

describe("Codex bridge", { timeout: 120_000 }, () => {
  type Msg = { id?: number | string; method?: string; params?: any; result?: any };
  /** A JSON-RPC client of the bridge (as in codex-bridge.test.ts), which runs the scripted app-server. */
  async function startBridge(approvalWaitMs: number) {
    const parent = await w.agent.createRun({ taskId: "codex-approvals-test", title: "Codex session" });
    const dir = tempDir("codex-approvals");
    dirs.push(dir);
    const child = spawn(
      process.execPath,
      [
        "bin/quiesce-adapter.mjs",
        "codex-bridge",
        "--run",
        parent.runId,
        "--",
        process.execPath,
        path.join(FIXTURES, "codex-app-server.mjs"),
      ],
      {
        cwd: ROOT,
        stdio: ["pipe", "pipe", "pipe"],
        env: {
          ...process.env,
          QUIESCE_URL: w.api.url,
          QUIESCE_API_KEY: w.agentKey,
          QUIESCE_APPROVAL_WAIT_MS: String(approvalWaitMs),
          FIXTURE_LOG: path.join(dir, "app-server.log"),
          FIXTURE_EFFECT_DIR: dir,
        },
      },
    );
    children.push(child);
    const seen: Msg[] = [];
    let stderr = "";
    child.stderr!.on("data", (d) => (stderr += d));
    createInterface({ input: child.stdout! }).on("line", (line) => seen.push(JSON.parse(line) as Msg));
    let next = 1;
    const request = async (method: string, params: unknown) => {
      const id = next++;
      child.stdin!.write(`${JSON.stringify({ method, id, params })}\n`);
      return until(() => seen.find((m) => m.id === id && m.method === undefined), `${method} answered`);
    };
    await request("initialize", { clientInfo: { name: "quiesce_test", title: "Quiesce test", version: "0.0.1" } });
    child.stdin!.write(`${JSON.stringify({ method: "initialized" })}\n`);
    const threadId = (await request("thread/start", { cwd: "/work" })).result.thread.id as string;
    /** The decisions the app-server received for its approval requests. */
    const decisions = () =>
      existsSync(path.join(dir, "app-server.log"))
        ? readFileSync(path.join(dir, "app-server.log"), "utf8")
            .trim()
            .split("\n")
            .filter(Boolean)
            .map((l) => JSON.parse(l) as Msg)
            .filter((m) => m.method === undefined && m.result?.decision !== undefined)
            .map((m) => m.result.decision as string)
        : [];
    const turn = async (text: string) =>
      (await request("turn/start", { threadId, input: [{ type: "text", text }] })).result.turn.id as string;
    return { seen, decisions, turn, stderr: () => stderr };
  }
  const pendingCommand = () =>
    until(
      () =>
        prisma().approval.findFirst({
          where: { teamId: w.teamId, tool: "codex.commandExecution", state: "pending", usedAt: null },
          orderBy: { createdAt: "desc" },
        }),
      "a pending approval for a Codex command",
    );

  test("Codex's approval request stays pending until the person answers: approve → accept, deny → decline", async () => {
    const b = await startBridge(120_000);
    const turnId = await b.turn("run: deploy preview");
    const a = await pendingCommand();
    expect(a.arguments).toMatchObject({
      command: "deploy preview",
      cwd: "/work",
      item: { type: "commandExecution", command: "deploy preview" },
    });
    expect(b.decisions()).toEqual([]); // Codex is still waiting for its answer
    await until(() => b.stderr().includes(`approval ${a.id}`), "the bridge names the approval");
    await w.operator.decideApproval(a.id, { decision: "approve" });
    await until(() => b.seen.find((m) => m.method === "turn/completed" && m.params.turn.id === turnId), "the turn completes");
    expect(b.decisions()).toEqual(["accept"]);
    // Reported after item/completed, independently of the turn's end.
    await until(async () => (await opRow(w.teamId, a.operationId))?.state === "succeeded", "the command reported succeeded");

    await b.turn("run: drop the database");
    const d = await pendingCommand();
    await w.operator.decideApproval(d.id, { decision: "deny", note: "no" });
    await until(() => b.decisions().length === 2, "the second decision");
    expect(b.decisions()).toEqual(["accept", "decline"]); // this action only; the session goes on
    await until(() => b.stderr().includes(`a person denied this call (approval ${d.id})`), "the refusal in words");
  });

  test("nobody answers within the bridge's wait: decline", async () => {
    const b = await startBridge(1500);
    await b.turn("run: deploy production");
    const a = await pendingCommand();
    await until(() => b.decisions().length === 1, "a decision");
    expect(b.decisions()).toEqual(["decline"]);
    expect((await w.agent.getApproval(a.id)).state).toBe("pending"); // it simply lapses later
  });
});
