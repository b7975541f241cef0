// The REAL `claude` binary (pinned, see clients.ts) under `quiesce exec --session` (docs/environment.md),
// against the scripted fake Messages API: a Bash tool call leaves a background `sleep` behind; the
// session's run is killed through the API; the supervisor empties the tree and the stop receipt lists
// that sleep as ended. Real API server, real engine, real database. Skips (with a message) when the binary
// cannot be installed, except under CI.
import { spawn, type ChildProcess } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, expect, test } from "vitest";
import { prisma } from "../../../lib/platform/db/prisma";
import { closePool } from "../../../lib/platform/db/pool";
import { runBarrierWorker } from "../../../lib/modules/stop/engine/worker";
import { StopReceiptSchema } from "../../../lib/schemas/barriers";
import { readCmdline } from "../../../lib/agent/supervisor/proc";
import { makeWorld, ROOT, runProcess, TSX, until, type World } from "../support";
import { CLAUDE_LAUNCHER } from "../../../lib/cli/hook-install";
import { ensureClient, noEgressEnv, type ClientBinary } from "./clients";
import { startFakeAnthropic, type FakeAnthropic } from "./fake-anthropic";

let claude: ClientBinary | null = null;
let w: World;
let fake: FakeAnthropic;
let dir: string;
const ac = new AbortController();
let engine: Promise<void> | null = null;
const children: ChildProcess[] = [];

beforeAll(async () => {
  const c = await ensureClient("claude");
  if (!c.available) {
    console.warn(`skipping the real claude under quiesce exec: ${c.why}`);
    return;
  }
  claude = c;
  w = await makeWorld();
  fake = await startFakeAnthropic();
  dir = mkdtempSync(path.join(os.tmpdir(), "quiesce-real-claude-exec-"));
  engine = runBarrierWorker({ teamId: w.teamId, signal: ac.signal, pollMs: 200, claimMs: 3000, localSettleMs: 300, listen: true });
}, 600_000);
afterAll(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
  if (!claude) return;
  ac.abort();
  await engine;
  await fake?.close();
  await w?.api.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
  await closePool();
  await prisma().$disconnect();
});

/** pids of live processes whose command line is exactly `cmd`. */
function pidsOf(cmd: string): number[] {
  return readdirSync("/proc")
    .filter((n) => /^\d+$/.test(n))
    .map(Number)
    .filter((pid) => readCmdline(pid) === cmd);
}

test("a background sleep a Bash call left behind is ended by the kill, and the receipt lists it", { timeout: 240_000 }, async (ctx) => {
  if (!claude) return ctx.skip();
  const sessionId = randomUUID();
  // A duration no other test uses, so the process is ours.
  const sleeper = `sleep ${600 + (process.pid % 300)}`;
  let runId = "";
  let barrierId = "";
  fake.script([
    { tool: "Bash", input: { command: `nohup ${sleeper} > /dev/null 2>&1 &`, description: "start a background job" } },
    {
      text: "started",
      // The next model turn: the job is running in the background; the operator kills the session's run now.
      before: async () => {
        await until(() => pidsOf(sleeper).length > 0, "the background sleep", 30_000);
        const run = await until(
          () => prisma().run.findFirst({ where: { teamId: w.teamId, nativeSessionId: sessionId } }),
          "the session's run",
        );
        runId = run.id;
        barrierId = (await w.operator.kill(run.id, "real claude under exec: kill")).barrierId;
        // Hold the answer: the supervisor ends claude (and its sleep) meanwhile.
        await new Promise((r) => setTimeout(r, 10_000));
      },
    },
  ]);
  const home = path.join(dir, "home");
  const cwd = path.join(dir, "work");
  for (const d of [home, cwd]) mkdirSync(d, { recursive: true });
  const child = spawn(
    process.execPath,
    [
      "--conditions=react-server",
      "--import",
      "tsx",
      path.join(ROOT, "bin/quiesce.ts"),
      "exec",
      "--session",
      sessionId,
      "--harness",
      "claude_code",
      "--grace",
      "0.5",
      "--state-dir",
      path.join(dir, "state"),
      "--url",
      w.api.url,
      "--key",
      w.agentKey,
      "--",
      // In a folder of its own (exec runs from the repository, where tsx resolves).
      "sh",
      "-c",
      'cd "$0" && exec "$@"',
      cwd,
      claude.bin,
      "-p",
      "start a background job",
      "--session-id",
      sessionId,
      "--allowedTools",
      "Bash",
      "--output-format",
      "json",
      "--model",
      "claude-sonnet-4-5",
    ],
    {
      cwd: ROOT,
      stdio: ["ignore", "ignore", "pipe"],
      env: { ...noEgressEnv(home), ANTHROPIC_BASE_URL: fake.url, ANTHROPIC_API_KEY: "sk-ant-fake", NODE_PATH: process.env.NODE_PATH },
    },
  );
  children.push(child);
  let stderr = "";
  child.stderr!.on("data", (d) => (stderr += d));
  const code = await new Promise<number | null>((r) => child.once("exit", (c) => r(c)));
  expect(code, stderr).toBe(137);
  expect(pidsOf(sleeper), "the sleep is gone").toEqual([]);

  const run = await prisma().run.findUniqueOrThrow({ where: { id: runId } });
  expect(run).toMatchObject({ nativeSessionId: sessionId, lifecycle: "killed" });
  const r = await until(
    () => prisma().stopReceipt.findFirst({ where: { barrierId }, orderBy: { version: "desc" } }),
    "the receipt",
    60_000,
  );
  const body = StopReceiptSchema.parse(r.body);
  const env = body.environment?.find((e) => e.run_id === runId);
  expect(env, JSON.stringify(body.environment)).toMatchObject({ supervised: true, status: "terminated", could_not_kill: [] });
  if (!env || !("processes" in env)) throw new Error("no environment evidence");
  expect(env.processes.find((p) => p.command === sleeper)?.ended, JSON.stringify(env.processes)).toMatch(/^after_sig(term|kill)$/);
  expect(env.processes.some((p) => p.command.includes("claude"))).toBe(true);
  expect(body.decision).toBe("stopped_and_quiet");
});

test(
  "the installed launcher: claude under exec with the hook, one run for the session, the background sleep ended by the kill",
  { timeout: 240_000 },
  async (ctx) => {
    if (!claude) return ctx.skip();
    const home = path.join(dir, "launch-home");
    const cwd = path.join(dir, "launch-work");
    for (const d of [home, cwd]) mkdirSync(d, { recursive: true });
    const keyFile = path.join(dir, "agent.key");
    writeFileSync(keyFile, w.agentKey);
    // The install writes the hook into the user's settings and the launcher beside the hook.
    const opt = path.join(dir, "opt");
    const installed = await runProcess(
      TSX,
      [
        "--conditions=react-server",
        "bin/quiesce.ts",
        "hook",
        "install",
        "--dir",
        opt,
        "--settings",
        path.join(home, ".claude/settings.json"),
        "--url",
        w.api.url,
        "--key-file",
        keyFile,
      ],
      "",
      process.env,
    );
    expect(installed.code, installed.stderr).toBe(0);
    const sleeper = `sleep ${700 + (process.pid % 200)}`;
    let runId = "";
    let barrierId = "";
    fake.script([
      { tool: "Bash", input: { command: `nohup ${sleeper} > /dev/null 2>&1 &`, description: "start a background job" } },
      {
        text: "started",
        before: async () => {
          await until(() => pidsOf(sleeper).length > 0, "the background sleep", 30_000);
          const runs = await prisma().run.findMany({ where: { teamId: w.teamId, taskId: "exec:claude" } });
          expect(runs).toHaveLength(1);
          runId = runs[0]!.id;
          barrierId = (await w.operator.kill(runId, "the launcher under exec: kill")).barrierId;
          await new Promise((r) => setTimeout(r, 10_000));
        },
      },
    ]);
    // From the project folder, as a person would start it: no repository, no tsx at the call site.
    const child = spawn(
      path.join(opt, CLAUDE_LAUNCHER),
      ["-p", "start a background job", "--allowedTools", "Bash", "--output-format", "json", "--model", "claude-sonnet-4-5"],
      {
        cwd,
        stdio: ["ignore", "ignore", "pipe"],
        env: {
          ...noEgressEnv(home),
          ANTHROPIC_BASE_URL: fake.url,
          ANTHROPIC_API_KEY: "sk-ant-fake",
          QUIESCE_CLAUDE: claude.bin,
          QUIESCE_HOOK_STATE_DIR: path.join(dir, "launch-hook-state"),
          XDG_STATE_HOME: path.join(dir, "launch-state"),
        },
      },
    );
    children.push(child);
    let stderr = "";
    child.stderr!.on("data", (d) => (stderr += d));
    const code = await new Promise<number | null>((r) => child.once("exit", (c) => r(c)));
    expect(code, stderr).toBe(137);
    expect(pidsOf(sleeper), "the sleep is gone").toEqual([]);

    // One run: exec registered the session, the hook found the same one and gated the Bash call on it.
    const run = await prisma().run.findUniqueOrThrow({ where: { id: runId } });
    expect(run).toMatchObject({ harness: "claude_code", lifecycle: "killed" });
    expect(run.nativeSessionId).toMatch(/^[0-9a-f-]{36}$/);
    expect(await prisma().run.count({ where: { teamId: w.teamId, nativeSessionId: run.nativeSessionId } })).toBe(1);
    expect(await prisma().gateDecision.findFirst({ where: { runId, decision: "allow" } })).not.toBeNull();
    const r = await until(
      () => prisma().stopReceipt.findFirst({ where: { barrierId }, orderBy: { version: "desc" } }),
      "the receipt",
      60_000,
    );
    const body = StopReceiptSchema.parse(r.body);
    const env = body.environment?.find((e) => e.run_id === runId);
    if (!env || !("processes" in env)) throw new Error(`no environment evidence: ${JSON.stringify(body.environment)}`);
    expect(env.processes.find((p) => p.command === sleeper)?.ended, JSON.stringify(env.processes)).toMatch(/^after_sig(term|kill)$/);
  },
);
