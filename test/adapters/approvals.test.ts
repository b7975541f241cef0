// Approvals and budgets through the adapters, against the real API and database: a team policy makes
// calls wait for a person's yes (or refuses them); the person answers through the approvals API, and
// each adapter, run as its own process as a harness would start it, holds the call and then goes on or
// refuses — the Claude Code hook (and its timeout into deny or ask), the MCP gateway and the Codex bridge.
import { rmSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { prisma } from "../../lib/platform/db/prisma";
import { closePool } from "../../lib/platform/db/pool";
import { createPolicyVersion, enablePolicy } from "../../lib/modules/policy";
import type { Principal } from "../../lib/platform/auth/principal";
import { makeUser } from "../support/fixtures";
import { makeWorld, opRow, ROOT, runProcess, tempDir, until, type World } from "./support";

let w: World;
let stateDir: string;
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
  await w?.api.close();
  if (stateDir) rmSync(stateDir, { recursive: true, force: true });
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
