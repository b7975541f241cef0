// The Claude Code hook as Claude Code runs it: a fresh `node bin/quiesce-hook.mjs claude-code` process
// per event, the documented hook JSON on stdin, against the real API and database. Covers every event,
// a subagent's call, pause, kill, an unreachable / silent control plane and malformed input.
import net from "node:net";
import { rmSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { prisma } from "../../lib/platform/db/prisma";
import { closePool } from "../../lib/platform/db/pool";
import { makeWorld, opRow, ROOT, runProcess, runRow, tempDir, type World } from "./support";

let w: World;
let stateDir: string;
const extraDirs: string[] = [];
beforeAll(async () => {
  w = await makeWorld();
  stateDir = tempDir("hook-state");
}, 60_000);
afterAll(async () => {
  await w?.api.close();
  for (const d of [stateDir, ...extraDirs]) if (d) rmSync(d, { recursive: true, force: true });
  await closePool();
  await prisma().$disconnect();
});

const HOOK = path.join(ROOT, "bin/quiesce-hook.mjs");
let seq = 0;
const sid = () => `sess-${process.pid}-${Date.now().toString(36)}-${++seq}`;
const toolUseId = () => `toolu_${Date.now().toString(36)}${++seq}`;

function env(over: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  // The hook's own deadline is generous here: the test machine is shared; the deadline itself is
  // tested separately with a control plane that never answers.
  const e: NodeJS.ProcessEnv = {
    ...process.env,
    QUIESCE_URL: w.api.url,
    QUIESCE_API_KEY: w.agentKey,
    QUIESCE_HOOK_STATE_DIR: stateDir,
    QUIESCE_HOOK_TIMEOUT_MS: "30000",
  };
  for (const [k, v] of Object.entries(over)) {
    if (v === undefined) delete e[k];
    else e[k] = v;
  }
  return e;
}

async function hook(input: unknown, over: Record<string, string | undefined> = {}) {
  const r = await runProcess(process.execPath, [HOOK, "claude-code"], typeof input === "string" ? input : JSON.stringify(input), env(over));
  return { ...r, json: r.stdout.trim() ? (JSON.parse(r.stdout) as Record<string, any>) : null };
}

const common = (session_id: string) => ({
  session_id,
  transcript_path: `/tmp/${session_id}.jsonl`,
  cwd: "/work/demo",
  permission_mode: "default",
});
const sessionStart = (s: string) => ({ ...common(s), hook_event_name: "SessionStart", source: "startup", model: "claude-x" });
const subagentStart = (s: string, agent_id: string) => ({
  ...common(s),
  hook_event_name: "SubagentStart",
  agent_id,
  agent_type: "Explore",
});
const preToolUse = (s: string, id: string, extra: Record<string, unknown> = {}) => ({
  ...common(s),
  hook_event_name: "PreToolUse",
  tool_name: "Bash",
  tool_input: { command: "ls" },
  tool_use_id: id,
  ...extra,
});
const postToolUse = (s: string, id: string, event = "PostToolUse") => ({
  ...common(s),
  hook_event_name: event,
  tool_name: "Bash",
  tool_input: { command: "ls" },
  tool_use_id: id,
  tool_response: { stdout: "a\nb" },
});

async function sessionRunId(session: string): Promise<string> {
  const rows = await prisma().run.findMany({ where: { teamId: w.teamId, nativeSessionId: session, nativeAgentId: null } });
  expect(rows).toHaveLength(1);
  return rows[0]!.id;
}

describe("session, tool calls, subagents", () => {
  test("SessionStart registers one claude_code run with the native session id; again → the same run", async () => {
    const s = sessionStart(sid());
    const a = await hook(s);
    expect(a).toMatchObject({ code: 0, stdout: "" });
    const runId = await sessionRunId(s.session_id);
    const run = await runRow(runId);
    expect(run).toMatchObject({ harness: "claude_code", nativeSessionId: s.session_id, parentRunId: null, lifecycle: "normal" });
    const b = await hook({ ...s, source: "resume" });
    expect(b.code).toBe(0);
    expect(await sessionRunId(s.session_id)).toBe(runId);
  });

  test("PreToolUse allowed prints nothing (defers to the user's permissions); PostToolUse completes the operation", async () => {
    const s = sid();
    await hook(sessionStart(s));
    const id = toolUseId();
    const pre = await hook(preToolUse(s, id));
    expect(pre).toMatchObject({ code: 0, stdout: "" });
    const runId = await sessionRunId(s);
    expect(await opRow(w.teamId, id)).toMatchObject({ state: "running", runId, tool: "Bash", kind: "call" });
    const post = await hook(postToolUse(s, id));
    expect(post).toMatchObject({ code: 0, stdout: "" });
    expect(await opRow(w.teamId, id)).toMatchObject({ state: "succeeded" });

    const failing = toolUseId();
    expect((await hook(preToolUse(s, failing))).code).toBe(0);
    expect((await hook({ ...postToolUse(s, failing, "PostToolUseFailure"), error: "exit 1" })).code).toBe(0);
    expect(await opRow(w.teamId, failing)).toMatchObject({ state: "failed" });

    // An interrupted tool (the user pressed Esc part-way) may have had its effect: unknown, not failed.
    const interrupted = toolUseId();
    expect((await hook(preToolUse(s, interrupted))).code).toBe(0);
    const post2 = await hook({ ...postToolUse(s, interrupted, "PostToolUseFailure"), error: "Interrupted by user", is_interrupt: true });
    expect(post2.code).toBe(0);
    expect(await opRow(w.teamId, interrupted)).toMatchObject({
      state: "aborted_unknown",
      outcomeDetail: { harness: "claude_code", abortedBy: "user_interrupt" },
    });
  });

  test("SubagentStart registers a child run keyed by agent_id; the subagent's tool call goes through it", async () => {
    const s = sid();
    await hook(sessionStart(s));
    const parent = await sessionRunId(s);
    expect((await hook(subagentStart(s, "agent-a1"))).code).toBe(0);
    const child = await prisma().run.findFirstOrThrow({ where: { teamId: w.teamId, nativeSessionId: s, nativeAgentId: "agent-a1" } });
    expect(child).toMatchObject({ parentRunId: parent, rootRunId: parent, harness: "claude_code" });
    const id = toolUseId();
    const pre = await hook(preToolUse(s, id, { agent_id: "agent-a1", agent_type: "Explore" }));
    expect(pre).toMatchObject({ code: 0, stdout: "" });
    expect(await opRow(w.teamId, id)).toMatchObject({ runId: child.id, state: "running" });
  });

  test("SessionEnd marks the session's run and its subagents' runs finished (a fleet stop leaves them alone)", async () => {
    const s = sid();
    await hook(sessionStart(s));
    await hook(subagentStart(s, "agent-end"));
    const parent = await sessionRunId(s);
    expect((await prisma().run.findUniqueOrThrow({ where: { id: parent } })).finishedAt).toBeNull();
    const end = await hook({ ...common(s), hook_event_name: "SessionEnd", reason: "exit" });
    expect(end).toMatchObject({ code: 0, stdout: "" });
    const rows = await prisma().run.findMany({ where: { teamId: w.teamId, nativeSessionId: s } });
    expect(rows).toHaveLength(2);
    for (const r of rows) expect(r.finishedAt).not.toBeNull();
  });

  test("SessionEnd reports an allowed call that never got an outcome (an interrupt: no PostToolUseFailure) as aborted_unknown", async () => {
    const s = sid();
    await hook(sessionStart(s));
    const [lost, done, denied] = [toolUseId(), toolUseId(), toolUseId()];
    expect((await hook(preToolUse(s, lost))).code).toBe(0);
    expect((await hook(preToolUse(s, done))).code).toBe(0);
    expect((await hook(postToolUse(s, done))).code).toBe(0);
    const runId = await sessionRunId(s);
    await w.operator.pause(runId, "hold the third call");
    expect((await hook(preToolUse(s, denied))).json).toMatchObject({ hookSpecificOutput: { permissionDecision: "deny" } });
    await w.operator.resume(runId, "resume");
    expect(await opRow(w.teamId, lost)).toMatchObject({ state: "running" });
    const end = await hook({ ...common(s), hook_event_name: "SessionEnd", reason: "other" });
    expect(end).toMatchObject({ code: 0, stdout: "" });
    const row = await opRow(w.teamId, lost);
    expect(row).toMatchObject({
      state: "aborted_unknown",
      outcomeDetail: { harness: "claude_code", abortedBy: "no_outcome_at_session_end" },
    });
    // The interval in which its effect may have happened: from the gate's allow to the report.
    expect(row!.startedAt!.getTime()).toBeLessThanOrEqual(row!.finishedAt!.getTime());
    // …and that interval is open in the evidence, with a reconciliation waiting for a person.
    const intervals = await prisma().uncertainInterval.findMany({ where: { operationId: row!.id } });
    expect(intervals).toHaveLength(1);
    expect(intervals[0]!.startedAt.getTime()).toBe(row!.startedAt!.getTime());
    expect(await prisma().reconciliation.count({ where: { operationId: row!.id } })).toBe(1);
    expect(await opRow(w.teamId, done)).toMatchObject({ state: "succeeded" });
    expect((await opRow(w.teamId, denied))?.state ?? "none").not.toBe("aborted_unknown");
    // A second SessionEnd (a resumed session ending again) reports nothing twice.
    expect((await hook({ ...common(s), hook_event_name: "SessionEnd", reason: "other" })).code).toBe(0);
    expect(await opRow(w.teamId, lost)).toMatchObject({ state: "aborted_unknown" });
  });

  test("with no cached mapping (state lost, or no SubagentStart seen) the hook finds the runs on the server", async () => {
    const s = sid();
    await hook(sessionStart(s));
    const parent = await sessionRunId(s);
    const id = toolUseId();
    const empty = tempDir("hook-empty");
    extraDirs.push(empty);
    const pre = await hook(preToolUse(s, id, { agent_id: "agent-late" }), { QUIESCE_HOOK_STATE_DIR: empty });
    expect(pre).toMatchObject({ code: 0, stdout: "" });
    const child = await prisma().run.findFirstOrThrow({ where: { teamId: w.teamId, nativeSessionId: s, nativeAgentId: "agent-late" } });
    expect(child.parentRunId).toBe(parent);
    expect(await opRow(w.teamId, id)).toMatchObject({ runId: child.id });
    expect(await sessionRunId(s)).toBe(parent); // no duplicate session run
  });
});

describe("operator control", () => {
  test("paused: the call is denied with a retry hint (never allowed, never stops Claude); resumed: allowed", async () => {
    const s = sid();
    await hook(sessionStart(s));
    const runId = await sessionRunId(s);
    await w.operator.pause(runId, "adapter test pause");
    const held = await hook(preToolUse(s, toolUseId()));
    expect(held.code).toBe(0);
    expect(held.json).toEqual({
      hookSpecificOutput: {
        hookEventName: "PreToolUse",
        permissionDecision: "deny",
        permissionDecisionReason: expect.stringContaining("paused by operator, retry later"),
      },
    });
    await w.operator.resume(runId, "adapter test resume");
    expect(await hook(preToolUse(s, toolUseId()))).toMatchObject({ code: 0, stdout: "" });
  });

  test("killed: deny + continue:false with a stopReason, for the session and for its subagent; a late PostToolUse stops too", async () => {
    const s = sid();
    await hook(sessionStart(s));
    await hook(subagentStart(s, "agent-k"));
    const runId = await sessionRunId(s);
    const running = toolUseId();
    expect((await hook(preToolUse(s, running))).code).toBe(0);
    await w.operator.kill(runId, "adapter test kill");

    const denied = await hook(preToolUse(s, toolUseId()));
    expect(denied.code).toBe(0);
    expect(denied.json).toMatchObject({
      hookSpecificOutput: {
        hookEventName: "PreToolUse",
        permissionDecision: "deny",
        permissionDecisionReason: expect.stringContaining("killed"),
      },
      continue: false,
      stopReason: expect.stringContaining("stopped by an operator"),
    });
    const sub = await hook(preToolUse(s, toolUseId(), { agent_id: "agent-k" }));
    expect(sub.json).toMatchObject({ hookSpecificOutput: { permissionDecision: "deny" }, continue: false });
    expect(sub.json!.hookSpecificOutput.permissionDecisionReason).toMatch(/parent_revoked|killed/);

    const late = await hook(postToolUse(s, running));
    expect(late).toMatchObject({ code: 0, json: { continue: false } });
    // A resumed session of a killed run stops at once.
    expect((await hook({ ...sessionStart(s), source: "resume" })).json).toMatchObject({ continue: false });
  });
});

describe("fail closed: exit 2 with a message on stderr", () => {
  test("unreachable control plane", async () => {
    const port = await closedPort();
    const r = await hook(preToolUse(sid(), toolUseId()), { QUIESCE_URL: `http://127.0.0.1:${port}` });
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toMatch(/unreachable.*fail closed/);
  });

  test("a control plane that accepts the connection but never answers: the hook's own deadline", async () => {
    const silent = net.createServer(() => {}); // holds every connection open, says nothing
    await new Promise<void>((r) => silent.listen(0, "127.0.0.1", () => r()));
    try {
      const port = (silent.address() as net.AddressInfo).port;
      const r = await hook(preToolUse(sid(), toolUseId()), { QUIESCE_URL: `http://127.0.0.1:${port}`, QUIESCE_HOOK_TIMEOUT_MS: "700" });
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/no decision within 700 ms|did not answer/);
    } finally {
      silent.close();
    }
  });

  test("malformed input: not JSON, a missing field, an unknown shape", async () => {
    const notJson = await hook("{not json");
    expect(notJson).toMatchObject({ code: 2, stdout: "" });
    expect(notJson.stderr).toMatch(/not JSON/);
    const { tool_use_id: _drop, ...noId } = preToolUse(sid(), "x");
    const missing = await hook(noId);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/tool_use_id/);
    expect((await hook([1, 2])).code).toBe(2);
    expect((await hook({ session_id: "s" })).stderr).toMatch(/hook_event_name/);
  });

  test("missing API key, bad deadline setting, unknown harness argument", async () => {
    expect((await hook(preToolUse(sid(), toolUseId()), { QUIESCE_API_KEY: undefined })).stderr).toMatch(/QUIESCE_API_KEY/);
    expect((await hook(preToolUse(sid(), toolUseId()), { QUIESCE_HOOK_TIMEOUT_MS: "soon" })).code).toBe(2);
    const r = await runProcess(process.execPath, [HOOK, "cursor"], "{}", env());
    expect(r.code).toBe(2);
  });

  test("a revoked key is refused by the control plane → exit 2, not allow", async () => {
    const r = await hook(preToolUse(sid(), toolUseId()), { QUIESCE_API_KEY: "qk_agent_not-a-real-key" });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/refused \(401/);
  });
});

test("`npm run quiesce -- hook claude-code`: JSON with --silent; without it (npm's banner on stdout) a refusal is exit 2", async () => {
  const npm = process.platform === "win32" ? "npm.cmd" : "npm";
  const s = sid();
  const silent = await runProcess(npm, ["run", "--silent", "quiesce", "--", "hook", "claude-code"], JSON.stringify(sessionStart(s)), env());
  expect(silent).toMatchObject({ code: 0, stdout: "" });
  const runId = await sessionRunId(s);
  await w.operator.kill(runId, "npm path kill");
  const json = await runProcess(
    npm,
    ["run", "--silent", "quiesce", "--", "hook", "claude-code"],
    JSON.stringify(preToolUse(s, toolUseId())),
    env(),
  );
  expect(json.code).toBe(0);
  expect(JSON.parse(json.stdout)).toMatchObject({ hookSpecificOutput: { permissionDecision: "deny" }, continue: false });
  const banner = await runProcess(npm, ["run", "quiesce", "--", "hook", "claude-code"], JSON.stringify(preToolUse(s, toolUseId())), env());
  expect(banner.stdout).toContain("> quiesce"); // npm's banner: why JSON cannot be used here
  expect(banner.code).toBe(2);
  expect(banner.stderr).toMatch(/Quiesce denied Bash/);
  const bad = await runProcess(npm, ["run", "--silent", "quiesce", "--", "hook", "claude-code"], "nope", env());
  expect(bad.code).toBe(2);
}, 120_000);

function closedPort(): Promise<number> {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}
