// The Claude Code hook against the REAL `claude` binary (pinned, installed into the client cache, see clients.ts),
// driven in print mode (and, for the interrupt, in stream-json input mode) against a scripted fake
// Messages API on 127.0.0.1 (ANTHROPIC_BASE_URL), with every other destination sent to a dead proxy. The hook is the bundled single file that
// `quiesce hook install` writes, registered through settings in the documented `|| exit 2` form.
// Real API server, real database. Skips (with a message) when the binary cannot be installed, except
// under CI.
import { spawn } from "node:child_process";
import { accessSync, constants, existsSync, mkdirSync, mkdtempSync, readFileSync, rmdirSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "vitest";
import { prisma } from "../../../lib/platform/db/prisma";
import { closePool } from "../../../lib/platform/db/pool";
import { buildHookBundle, HOOK_FILE, hookSettings } from "../../../lib/cli/hook-install";
import { makeWorld, opRow, until, type World } from "../support";
import { ensureClient, noEgressEnv, type ClientBinary } from "./clients";
import { startFakeAnthropic, type FakeAnthropic } from "./fake-anthropic";

let claude: ClientBinary | null = null;
let w: World;
let fake: FakeAnthropic;
let dir: string;
let settingsFile: string;
let hookFile: string;

beforeAll(async () => {
  const c = await ensureClient("claude");
  if (!c.available) return;
  claude = c;
  w = await makeWorld();
  fake = await startFakeAnthropic();
  dir = mkdtempSync(path.join(os.tmpdir(), "quiesce-real-claude-"));
  hookFile = path.join(dir, "hook", HOOK_FILE);
  await buildHookBundle(hookFile);
  settingsFile = path.join(dir, "settings.json");
  writeFileSync(settingsFile, JSON.stringify({ hooks: hookSettings(hookFile) }));
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

function claudeEnv(home: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    ...noEgressEnv(home),
    ANTHROPIC_BASE_URL: fake.url,
    ANTHROPIC_API_KEY: "sk-ant-fake",
    QUIESCE_URL: w.api.url,
    QUIESCE_API_KEY: w.agentKey,
    QUIESCE_HOOK_STATE_DIR: path.join(dir, "hook-state"),
    QUIESCE_HOOK_TIMEOUT_MS: "20000",
    ...extra,
  };
}

/**
 * One `claude -p` session; resolves with its JSON result. `settings: null` passes no --settings
 * file (the hooks then come only from the user, project and managed settings).
 */
function runClaude(
  prompt: string,
  opts: { extra?: string[]; env?: Record<string, string>; cwd?: string; home?: string; settings?: string | null } = {},
): Promise<ClaudeResult> {
  const home = opts.home ?? path.join(dir, "home");
  const cwd = opts.cwd ?? path.join(dir, "work");
  for (const d of [home, cwd]) mkdirSync(d, { recursive: true });
  const settings = opts.settings === undefined ? settingsFile : opts.settings;
  return new Promise((resolve, reject) => {
    const child = spawn(
      claude!.bin,
      [
        "-p",
        prompt,
        ...(settings ? ["--settings", settings] : []),
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
        env: claudeEnv(home, opts.env),
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

interface StreamSession {
  lines: any[];
  raw: () => string;
  send(msg: unknown): void;
  waitFor(pred: (line: any) => boolean, what: string): Promise<any>;
  /** Closes stdin (the session ends, SessionEnd hooks run) and waits for the exit code. */
  end(): Promise<number | null>;
}

/** One `claude -p --input-format stream-json` session: messages and control requests on stdin. */
function startClaudeStream(opts: { settings: string; cwd?: string }): StreamSession {
  const home = path.join(dir, "home");
  const cwd = opts.cwd ?? path.join(dir, "work");
  for (const d of [home, cwd]) mkdirSync(d, { recursive: true });
  const child = spawn(
    claude!.bin,
    [
      "-p",
      "--input-format",
      "stream-json",
      "--output-format",
      "stream-json",
      "--verbose",
      "--settings",
      opts.settings,
      "--allowedTools",
      "Bash",
      "--model",
      "claude-sonnet-4-5",
    ],
    { cwd, stdio: ["pipe", "pipe", "pipe"], env: claudeEnv(home) },
  );
  const lines: any[] = [];
  let out = "";
  let err = "";
  child.stdout.on("data", (d) => {
    out += d;
    let i: number;
    while ((i = out.indexOf("\n")) >= 0) {
      const line = out.slice(0, i);
      out = out.slice(i + 1);
      try {
        lines.push(JSON.parse(line));
      } catch {
        lines.push({ type: "(not json)", line });
      }
    }
  });
  child.stderr.on("data", (d) => (err += d));
  const exited = new Promise<number | null>((resolve) => child.once("close", resolve));
  const killer = setTimeout(() => child.kill("SIGKILL"), 180_000);
  return {
    lines,
    raw: () => `${lines.map((l) => JSON.stringify(l).slice(0, 300)).join("\n")}\n${err.slice(0, 2000)}`,
    send: (msg) => child.stdin.write(`${JSON.stringify(msg)}\n`),
    waitFor: (pred, what) => until(() => lines.find(pred), what),
    end: async () => {
      child.stdin.end();
      const code = await Promise.race([exited, sleep(60_000).then(() => "timeout" as const)]);
      if (code === "timeout") child.kill("SIGKILL");
      clearTimeout(killer);
      return code === "timeout" ? null : code;
    },
  };
}

/**
 * Claude Code reads managed settings on Linux only from /etc/claude-code (managed-settings.json and
 * the managed-settings.d drop-in folder; 2.1.332 has no environment variable or flag that points
 * elsewhere: CLAUDE_CODE_MANAGED_SETTINGS_PATH is not honoured by the public build). The managed test
 * adds ONE drop-in file of its own there and removes it (and any folder it had to create) afterwards;
 * an existing managed-settings.json or other drop-in is never touched. Needs write access (root).
 */
const MANAGED_ROOT = "/etc/claude-code";
const MANAGED_DROP_IN = path.join(MANAGED_ROOT, "managed-settings.d");

function managedAccess(): string | null {
  try {
    if (existsSync(MANAGED_DROP_IN)) accessSync(MANAGED_DROP_IN, constants.W_OK);
    else accessSync(existsSync(MANAGED_ROOT) ? MANAGED_ROOT : "/etc", constants.W_OK);
    return null;
  } catch {
    return `cannot write ${MANAGED_DROP_IN} (run as root to test managed settings)`;
  }
}

/** Writes a managed drop-in for the duration of `body`, then removes it and the folders it created. */
async function withManagedSettings<T>(settings: unknown, body: () => Promise<T>): Promise<T> {
  const created: string[] = [];
  for (const d of [MANAGED_ROOT, MANAGED_DROP_IN])
    if (!existsSync(d)) {
      mkdirSync(d);
      created.push(d);
    }
  const file = path.join(MANAGED_DROP_IN, `zz-quiesce-real-test-${process.pid}.json`);
  writeFileSync(file, JSON.stringify(settings));
  try {
    return await body();
  } finally {
    rmSync(file, { force: true });
    for (const d of created.reverse()) rmdirSync(d);
  }
}

/** A project folder whose .claude/settings.json switches every hook off (unless `disable` is false). */
function project(name: string, disable = true): string {
  const p = path.join(dir, name);
  mkdirSync(path.join(p, ".claude"), { recursive: true });
  if (disable) writeFileSync(path.join(p, ".claude", "settings.json"), JSON.stringify({ disableAllHooks: true }));
  return p;
}

const runsOf = (sessionId: string) => prisma().run.findMany({ where: { teamId: w.teamId, nativeSessionId: sessionId } });

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
    // Three pauses of 3 s outlast the 8 s TTL; each gap between two gate calls (a pause, a hook
    // process start, the Bash call) stays under it even on a loaded machine (at load 23, a 3 s TTL
    // with 1.2 s pauses was not).
    const pause = async () => {
      await sleep(3000);
    };
    fake.script([
      write("l1.txt"),
      { ...write("l2.txt"), before: pause },
      { ...write("l3.txt"), before: pause },
      { ...write("l4.txt"), before: pause },
    ]);
    const r = await runClaude("write l1..l4", { env: { QUIESCE_LEASE_TTL_SECONDS: "8" } });
    for (const f of ["l1.txt", "l2.txt", "l3.txt", "l4.txt"]) expect(existsSync(file(f)), f).toBe(true);
    const run = await sessionRun(r.sessionId!);
    const lease = await prisma().lease.findFirstOrThrow({ where: { runId: run.id } });
    expect(lease.ttlSeconds).toBe(8);
    expect(lease.validUntil.getTime() - lease.createdAt.getTime()).toBeGreaterThan(8000);
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
  test("an interrupt (stream-json control request) stops a running Bash call; Claude Code sends no PostToolUseFailure, and SessionEnd records the call aborted_unknown", async (ctx) => {
    if (!claude) return ctx.skip();
    // What the hook would record: PostToolUseFailure with is_interrupt: true → aborted_unknown
    // (test/adapters/claude-code-hook.test.ts). What the real binary does, shown here: the interrupt
    // stops the call, and no PostToolUseFailure (nor PostToolUse) hook is started for it — its
    // PostToolUseFailure hooks run under the turn's abort signal, which the interrupt has already
    // aborted. A witness hook beside ours records every event Claude Code delivers. What still
    // arrives is SessionEnd, where the hook settles what never got an outcome.
    const started = file("int-started");
    const after = file("int-after");
    const witness = path.join(dir, "witness.jsonl");
    const hooks = hookSettings(hookFile) as Record<string, { matcher?: string; hooks: object[] }[]>;
    const witnessHook = { type: "command", command: `cat >> '${witness}'; echo >> '${witness}'`, timeout: 30 };
    for (const e of ["PreToolUse", "PostToolUse", "PostToolUseFailure", "SessionEnd"])
      hooks[e]!.push({ ...(e === "SessionEnd" ? {} : { matcher: "*" }), hooks: [witnessHook] });
    const settings = path.join(dir, "settings-interrupt.json");
    writeFileSync(settings, JSON.stringify({ hooks }));
    const toolUseId = `toolu_interrupt_${Date.now().toString(36)}`;
    fake.script([
      { tool: "Bash", id: toolUseId, input: { command: `touch '${started}'; sleep 30; touch '${after}'`, description: "a long call" } },
    ]);

    const s = startClaudeStream({ settings });
    s.send({ type: "user", message: { role: "user", content: "run the long call" } });
    await until(() => existsSync(started), "the Bash call running");
    // The gate allowed it: Quiesce has the operation running.
    await until(async () => (await opRow(w.teamId, toolUseId))?.state === "running", "operation running in Quiesce");
    s.send({ type: "control_request", request_id: "req_interrupt_1", request: { subtype: "interrupt" } });
    const ack = await s.waitFor((l) => l.type === "control_response" && l.response?.request_id === "req_interrupt_1", "interrupt ack");
    expect(ack.response.subtype, s.raw()).toBe("success");
    const result = await s.waitFor(
      (l) => l.type === "user" && JSON.stringify(l.message?.content ?? "").includes(toolUseId),
      "tool_result of the interrupted call",
    );
    expect(JSON.stringify(result.message.content)).toMatch(/stopped while running/);
    await s.end();
    expect(existsSync(after), "the call was stopped, not run to its end").toBe(false);

    const events = readFileSync(witness, "utf8")
      .split("\n")
      .filter((l) => l.trim())
      .map((l) => JSON.parse(l) as { hook_event_name: string; tool_use_id?: string; is_interrupt?: boolean });
    const names = events.map((e) => e.hook_event_name);
    expect(names, "SessionEnd proves the witness saw the session to its end").toContain("SessionEnd");
    // The proof: for the interrupted call, Claude Code 2.1.332 delivered PreToolUse and nothing after it.
    expect(
      events.filter((e) => e.tool_use_id === toolUseId).map((e) => e.hook_event_name),
      `hook events seen: ${names.join(", ")}`,
    ).toEqual(["PreToolUse"]);
    // So the hook never hears the call's outcome; at SessionEnd it reports the allowed call that got
    // none as aborted_unknown — never failed or succeeded — over the interval from the gate's allow
    // to the session's end, in which its effect may or may not have happened.
    const op = await opRow(w.teamId, toolUseId);
    expect(op).toMatchObject({
      state: "aborted_unknown",
      outcomeDetail: { harness: "claude_code", abortedBy: "no_outcome_at_session_end" },
    });
    expect(op!.startedAt!.getTime()).toBeLessThanOrEqual(op!.finishedAt!.getTime());
  });

  test("managed settings: the hook still runs, and denies, in a project whose settings say disableAllHooks: true", async (ctx) => {
    if (!claude) return ctx.skip();
    const why = managedAccess();
    if (why) {
      if (process.env.CI) throw new Error(`${why} (CI: the managed-settings test must run)`);
      console.warn(`[real clients] SKIPPING managed settings: ${why}`);
      return ctx.skip();
    }
    const proj = project("project-managed");
    const target = path.join(proj, "m1.txt");
    const since = new Date();
    fake.script([
      { tool: "Bash", input: { command: `echo ok > '${path.join(proj, "m0.txt")}'`, description: "write m0" } },
      {
        tool: "Bash",
        input: { command: `echo ok > '${target}'`, description: "write m1" },
        before: async () => {
          const run = await until(
            () =>
              prisma().run.findFirst({
                where: { teamId: w.teamId, harness: "claude_code", createdAt: { gt: since }, operations: { some: { state: "succeeded" } } },
                orderBy: { createdAt: "desc" },
              }),
            "the managed hook registered the session and its first call",
          );
          await w.operator.kill(run.id, "kill under managed settings");
        },
      },
    ]);
    const r = await withManagedSettings({ hooks: hookSettings(hookFile) }, () =>
      runClaude("write m0 then m1", { cwd: proj, home: path.join(dir, "home-managed"), settings: null }),
    );
    expect(existsSync(path.join(proj, "m0.txt")), r.raw.slice(0, 1500)).toBe(true);
    expect(existsSync(target), "the managed hook denied the call after the kill").toBe(false);
    const [run] = await runsOf(r.sessionId!);
    expect(run, "the managed hook registered the session").toBeDefined();
    expect(await prisma().gateDecision.findFirst({ where: { runId: run!.id, decision: "deny", reason: "killed" } })).not.toBeNull();
    expect(existsSync(path.join(MANAGED_DROP_IN, `zz-quiesce-real-test-${process.pid}.json`))).toBe(false);
  });

  test("user-level hooks alone are switched off by a project's disableAllHooks: true (why the hook belongs in managed settings)", async (ctx) => {
    if (!claude) return ctx.skip();
    const home = path.join(dir, "home-user-hooks");
    mkdirSync(path.join(home, ".claude"), { recursive: true });
    writeFileSync(path.join(home, ".claude", "settings.json"), JSON.stringify({ hooks: hookSettings(hookFile) }));
    // Control: in an ordinary project the user-level hook runs (the session gets a run).
    const plain = project("project-plain", false);
    fake.script([{ tool: "Bash", input: { command: `echo ok > '${path.join(plain, "u0.txt")}'`, description: "write u0" } }]);
    const a = await runClaude("write u0", { cwd: plain, home, settings: null });
    expect(existsSync(path.join(plain, "u0.txt")), a.raw.slice(0, 1500)).toBe(true);
    expect(await runsOf(a.sessionId!)).toHaveLength(1);
    // The same user, in a project that switches hooks off: the call runs and Quiesce never hears of it.
    const off = project("project-hooks-off");
    fake.script([{ tool: "Bash", input: { command: `echo ok > '${path.join(off, "u1.txt")}'`, description: "write u1" } }]);
    const b = await runClaude("write u1", { cwd: off, home, settings: null });
    expect(existsSync(path.join(off, "u1.txt")), b.raw.slice(0, 1500)).toBe(true);
    expect(b.sessionId).toBeTruthy();
    expect(await runsOf(b.sessionId!)).toHaveLength(0);
  });
});
