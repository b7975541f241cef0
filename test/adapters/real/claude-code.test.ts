// The Claude Code hook against the REAL `claude` binary (pinned, installed into the client cache, see clients.ts),
// driven in print mode against a scripted fake Messages API on 127.0.0.1 (ANTHROPIC_BASE_URL), with
// every other destination sent to a dead proxy. The hook is the bundled single file that
// `quiesce hook install` writes, registered through settings in the documented `|| exit 2` form.
// Real API server, real database. Skips (with a message) when the binary cannot be installed, except
// under CI.
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "vitest";
import { prisma } from "../../../lib/db/prisma";
import { closePool } from "../../../lib/db/pool";
import { buildHookBundle, hookSettings } from "../../../lib/cli/hook-install";
import { makeWorld, until, type World } from "../support";
import { ensureClient, noEgressEnv, type ClientBinary } from "./clients";
import { startFakeAnthropic, type FakeAnthropic } from "./fake-anthropic";

let claude: ClientBinary | null = null;
let w: World;
let fake: FakeAnthropic;
let dir: string;
let settingsFile: string;

beforeAll(async () => {
  const c = await ensureClient("claude");
  if (!c.available) return;
  claude = c;
  w = await makeWorld();
  fake = await startFakeAnthropic();
  dir = mkdtempSync(path.join(os.tmpdir(), "quiesce-real-claude-"));
  const hook = path.join(dir, "hook", "quiesce-hook.mjs");
  await buildHookBundle(hook);
  settingsFile = path.join(dir, "settings.json");
  writeFileSync(settingsFile, JSON.stringify({ hooks: hookSettings(hook) }));
}, 600_000);
beforeEach(() => {
  fake?.clear();
});
afterAll(async () => {
  if (!claude) return;
  await fake?.close();
  await w?.api.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
  await closePool();
  await prisma().$disconnect();
});

interface ClaudeResult {
  code: number | null;
  out: any;
  raw: string;
  sessionId?: string;
}

/** One `claude -p` session; resolves with its JSON result. */
function runClaude(prompt: string, opts: { extra?: string[]; env?: Record<string, string>; cwd?: string } = {}): Promise<ClaudeResult> {
  const home = path.join(dir, "home");
  const cwd = opts.cwd ?? path.join(dir, "work");
  for (const d of [home, cwd]) mkdirSync(d, { recursive: true });
  return new Promise((resolve, reject) => {
    const child = spawn(
      claude!.bin,
      [
        "-p",
        prompt,
        "--settings",
        settingsFile,
        "--allowedTools",
        "Bash",
        "--output-format",
        "json",
        "--model",
        "claude-sonnet-4-5",
        ...(opts.extra ?? []),
      ],
      {
        cwd,
        stdio: ["ignore", "pipe", "pipe"],
        env: {
          ...noEgressEnv(home),
          ANTHROPIC_BASE_URL: fake.url,
          ANTHROPIC_API_KEY: "sk-ant-fake",
          QUIESCE_URL: w.api.url,
          QUIESCE_API_KEY: w.agentKey,
          QUIESCE_HOOK_STATE_DIR: path.join(dir, "hook-state"),
          QUIESCE_HOOK_TIMEOUT_MS: "20000",
          ...opts.env,
        },
      },
    );
    let raw = "";
    child.stdout.on("data", (d) => (raw += d));
    child.stderr.on("data", (d) => (raw += d));
    const timer = setTimeout(() => child.kill("SIGKILL"), 120_000);
    child.once("error", reject);
    child.once("close", (code) => {
      clearTimeout(timer);
      let out: any = null;
      try {
        out = JSON.parse(raw.slice(raw.indexOf("{"), raw.lastIndexOf("}") + 1));
      } catch {
        /* not JSON */
      }
      resolve({ code, out, raw, sessionId: out?.session_id });
    });
  });
}

const file = (name: string) => path.join(dir, "work", name);
const write = (name: string) => ({ tool: "Bash", input: { command: `echo ok > ${file(name)}`, description: `write ${name}` } });
const sessionRun = (sessionId: string) =>
  until(
    () => prisma().run.findFirst({ where: { teamId: w.teamId, nativeSessionId: sessionId, nativeAgentId: null } }),
    `run of ${sessionId}`,
  );

describe("real Claude Code", { timeout: 240_000 }, () => {
  test("an allowed call runs and is recorded against the session's run (harness, native id, operation)", async (ctx) => {
    if (!claude) return ctx.skip();
    fake.script([write("a1.txt")]);
    const r = await runClaude("write a1");
    expect(r.out?.subtype, r.raw.slice(0, 2000)).toBe("success");
    expect(existsSync(file("a1.txt"))).toBe(true);
    const run = await sessionRun(r.sessionId!);
    expect(run.harness).toBe("claude_code");
    const op = await until(
      () => prisma().operation.findFirst({ where: { runId: run.id, tool: "Bash", state: "succeeded" } }),
      "operation succeeded",
    );
    expect(op.operationId).toMatch(/^toolu_/);
  });

  test("a subagent's tool call goes through its own child run (SubagentStart), under the session's run", async (ctx) => {
    if (!claude) return ctx.skip();
    fake.script([
      {
        tool: "Agent",
        input: { description: "write a file", prompt: "subagent: write s1", subagent_type: "general-purpose" },
        conversation: "delegate",
      },
      { ...write("s1.txt"), conversation: "subagent: write s1" },
      { text: "sub done", conversation: "subagent: write s1" },
      { text: "Done.", conversation: "delegate" },
    ]);
    const r = await runClaude("delegate", { extra: ["--allowedTools", "Bash,Agent,Task"] });
    expect(existsSync(file("s1.txt")), r.raw.slice(0, 1500)).toBe(true);
    const parent = await sessionRun(r.sessionId!);
    const child = await until(
      () => prisma().run.findFirst({ where: { teamId: w.teamId, parentRunId: parent.id, nativeAgentId: { not: null } } }),
      "subagent run",
    );
    expect(child).toMatchObject({ harness: "claude_code", nativeSessionId: r.sessionId });
    expect(await prisma().operation.findFirst({ where: { runId: child.id, tool: "Bash" } })).not.toBeNull();
  });

  test("a kill mid-session: the next tool call is denied, Claude is stopped, nothing more runs", async (ctx) => {
    if (!claude) return ctx.skip();
    let sessionId = "";
    fake.script([
      write("k1.txt"),
      {
        ...write("k2.txt"),
        before: async () => {
          const run = await until(
            () =>
              prisma().run.findFirst({
                where: {
                  teamId: w.teamId,
                  operations: { some: { tool: "Bash", state: "succeeded", outcomeDetail: { not: undefined } } },
                  nativeSessionId: { not: null },
                  createdAt: { gt: new Date(Date.now() - 60_000) },
                },
                orderBy: { createdAt: "desc" },
              }),
            "first call done",
          );
          sessionId = run.nativeSessionId!;
          await w.operator.kill(run.id, "kill mid-session");
        },
      },
      write("k3.txt"),
    ]);
    const r = await runClaude("write k1 then k2");
    expect(existsSync(file("k1.txt"))).toBe(true);
    expect(existsSync(file("k2.txt"))).toBe(false);
    expect(existsSync(file("k3.txt"))).toBe(false);
    expect(r.sessionId ?? sessionId).toBe(sessionId);
    const run = await sessionRun(sessionId);
    expect(await prisma().gateDecision.findFirst({ where: { runId: run.id, decision: "deny", reason: "killed" } })).not.toBeNull();
  });

  test("a pause denies the call (retry later) and a resume lets the next session's call through", async (ctx) => {
    if (!claude) return ctx.skip();
    fake.script([
      {
        ...write("p1.txt"),
        before: async () => {
          const run = await until(
            () =>
              prisma().run.findFirst({
                where: { teamId: w.teamId, harness: "claude_code", lifecycle: "normal", createdAt: { gt: new Date(Date.now() - 30_000) } },
                orderBy: { createdAt: "desc" },
              }),
            "session run",
          );
          await w.operator.pause(run.id, "pause real claude");
        },
      },
    ]);
    const r = await runClaude("write p1");
    expect(existsSync(file("p1.txt"))).toBe(false);
    const run = await sessionRun(r.sessionId!);
    expect(run.lifecycle).toBe("paused");
    expect(await prisma().gateDecision.findFirst({ where: { runId: run.id, decision: "hold" } })).not.toBeNull();
    await w.operator.resume(run.id, "resume real claude");
    fake.script([write("p2.txt")]);
    await runClaude("write p2", { extra: ["--resume", r.sessionId!] });
    expect(existsSync(file("p2.txt"))).toBe(true);
  });

  test("a session that works longer than its lease TTL keeps its authority (renewal)", async (ctx) => {
    if (!claude) return ctx.skip();
    const pause = async () => {
      await sleep(1200);
    };
    fake.script([
      write("l1.txt"),
      { ...write("l2.txt"), before: pause },
      { ...write("l3.txt"), before: pause },
      { ...write("l4.txt"), before: pause },
    ]);
    const r = await runClaude("write l1..l4", { env: { QUIESCE_LEASE_TTL_SECONDS: "3" } });
    for (const f of ["l1.txt", "l2.txt", "l3.txt", "l4.txt"]) expect(existsSync(file(f)), f).toBe(true);
    const run = await sessionRun(r.sessionId!);
    const lease = await prisma().lease.findFirstOrThrow({ where: { runId: run.id } });
    expect(lease.ttlSeconds).toBe(3);
    expect(lease.validUntil.getTime() - lease.createdAt.getTime()).toBeGreaterThan(3000);
  });

  test("--resume --fork-session of a killed session: the fork inherits the kill; nothing runs", async (ctx) => {
    if (!claude) return ctx.skip();
    fake.script([write("f1.txt")]);
    const a = await runClaude("write f1");
    const runA = await sessionRun(a.sessionId!);
    await w.operator.kill(runA.id, "kill before fork");
    fake.script([write("f2.txt")]);
    const b = await runClaude("write f2", { extra: ["--resume", a.sessionId!, "--fork-session"] });
    expect(existsSync(file("f2.txt"))).toBe(false);
    if (b.sessionId && b.sessionId !== a.sessionId) {
      // The fork never got a live run of its own.
      const forkRuns = await prisma().run.findMany({ where: { teamId: w.teamId, nativeSessionId: b.sessionId } });
      for (const r of forkRuns) expect(r.parentRunId).toBe(runA.id);
    }
  });
});
