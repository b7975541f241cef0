// The Codex bridge in front of the REAL `codex app-server` (pinned, installed into
// the client cache, see clients.ts), its model a scripted fake Responses API on 127.0.0.1 (a custom
// model_providers entry), every other destination sent to a dead proxy. Real API server and database.
// Whatever approval mode the client asks for, the bridge imposes its own, so the command is asked
// about and decided by the gate. Skips with a message when the binary cannot be installed (not in CI).
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { createInterface } from "node:readline";
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "vitest";
import { prisma } from "../../../lib/platform/db/prisma";
import { closePool } from "../../../lib/platform/db/pool";
import { hasEnvMarker, listPids, readCmdline, signal } from "../../../lib/agent/supervisor/proc";
import { makeWorld, ROOT, stopChild, until, type World } from "../support";
import { ensureClient, noEgressEnv, type ClientBinary } from "./clients";
import { codexConfig, startFakeOpenAI, type FakeOpenAI } from "./fake-openai";

let codex: ClientBinary | null = null;
let w: World;
let fake: FakeOpenAI;
let dir: string;
const bridges: Bridge[] = [];

beforeAll(async () => {
  const c = await ensureClient("codex");
  if (!c.available) return;
  codex = c;
  w = await makeWorld();
  fake = await startFakeOpenAI();
  // Not under /tmp: Codex refuses to create its helper aliases there.
  // A fresh clone has no .quiesce/ yet.
  mkdirSync(path.join(ROOT, ".quiesce"), { recursive: true });
  dir = mkdtempSync(path.join(ROOT, ".quiesce", "real-codex-"));
  writeFileSync(path.join(dir, "config.toml"), codexConfig(fake.url));
}, 600_000);
beforeEach(() => {
  fake?.clear();
});
afterAll(async () => {
  if (!codex) return;
  await Promise.allSettled(bridges.map((b) => b.close()));
  await fake?.close();
  await w?.api.close();
  if (dir) {
    // A codex process the bridge started (or one orphaned by the kill tests) may still be writing its session
    // files: stop every process of this CODEX_HOME first, then retry a non-empty folder.
    await stopProcessesOf(`CODEX_HOME=${dir}`);
    rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 });
  }
  await closePool();
  await prisma().$disconnect();
});

/** SIGKILL every process whose environment holds `entry`, and wait (up to 5 s) until none is left. */
async function stopProcessesOf(entry: string): Promise<void> {
  for (let waited = 0; waited < 5000; waited += 100) {
    const pids = listPids().filter((pid) => pid !== process.pid && hasEnvMarker(pid, entry));
    if (pids.length === 0) return;
    for (const pid of pids) signal(pid, "SIGKILL");
    await new Promise((r) => setTimeout(r, 100));
  }
}

type Msg = { id?: number | string; method?: string; params?: any; result?: any; error?: { code: number; message: string } };

class Bridge {
  readonly seen: Msg[] = [];
  private next = 1;
  private waiters: { pred: (m: Msg) => boolean; resolve: (m: Msg) => void }[] = [];
  stderr = "";
  constructor(
    readonly child: ChildProcessWithoutNullStreams,
    readonly parentRunId: string,
  ) {
    createInterface({ input: child.stdout }).on("line", (line) => {
      let m: Msg;
      try {
        m = JSON.parse(line) as Msg;
      } catch {
        return;
      }
      this.seen.push(m);
      this.waiters = this.waiters.filter((wt) => (wt.pred(m) ? (wt.resolve(m), false) : true));
    });
    child.stderr.on("data", (d) => (this.stderr += d));
  }
  waitFor(pred: (m: Msg) => boolean, what = "message"): Promise<Msg> {
    const hit = this.seen.find(pred);
    if (hit) return Promise.resolve(hit);
    return new Promise((resolve, reject) => {
      const t = setTimeout(() => reject(new Error(`no ${what} within 60 s; bridge stderr:\n${this.stderr.slice(-3000)}`)), 60_000);
      this.waiters.push({
        pred,
        resolve: (m) => {
          clearTimeout(t);
          resolve(m);
        },
      });
    });
  }
  async request(method: string, params: unknown): Promise<Msg> {
    const id = this.next++;
    this.child.stdin.write(`${JSON.stringify({ method, id, params })}\n`);
    return this.waitFor((m) => m.id === id && m.method === undefined, `answer to ${method}`);
  }
  notify(method: string) {
    this.child.stdin.write(`${JSON.stringify({ method })}\n`);
  }
  async close() {
    this.child.stdin.end();
    await stopChild(this.child);
  }
}

async function startBridge(env: Record<string, string> = {}, flags?: string[]): Promise<Bridge> {
  const parent = await w.agent.createRun({ taskId: "real-codex", title: "Codex session" });
  const work = path.join(dir, `work-${bridges.length}`);
  mkdirSync(work, { recursive: true });
  const child = spawn(
    process.execPath,
    ["bin/quiesce-adapter.mjs", "codex-bridge", ...(flags ?? ["--run", parent.runId]), "--", codex!.bin, "app-server"],
    {
      cwd: ROOT,
      stdio: ["pipe", "pipe", "pipe"],
      env: {
        ...noEgressEnv(dir),
        CODEX_HOME: dir,
        FAKE_OPENAI_KEY: "sk-fake",
        QUIESCE_URL: w.api.url,
        QUIESCE_API_KEY: w.agentKey,
        ...env,
      },
    },
  );
  const b = new Bridge(child, parent.runId);
  bridges.push(b);
  await b.request("initialize", { clientInfo: { name: "quiesce_real_test", title: "Quiesce", version: "0.0.1" } });
  b.notify("initialized");
  return b;
}

async function turn(b: Bridge, threadId: string, text: string): Promise<Msg> {
  const r = await b.request("turn/start", {
    threadId,
    input: [{ type: "text", text }],
    approvalPolicy: "never",
    sandboxPolicy: { type: "dangerFullAccess" },
  });
  expect(r.error, JSON.stringify(r.error)).toBeUndefined();
  const turnId = r.result.turn.id as string;
  return b.waitFor((m) => m.method === "turn/completed" && m.params?.turn?.id === turnId, `turn/completed ${turnId}`);
}

const commandItems = (b: Bridge) =>
  b.seen.filter((m) => m.method === "item/completed" && m.params?.item?.type === "commandExecution").map((m) => m.params.item);

describe("real codex app-server behind the bridge", { timeout: 240_000 }, () => {
  for (const mode of [
    { approvalPolicy: "never", sandbox: "danger-full-access" },
    { approvalPolicy: "on-request", sandbox: "workspace-write" },
    { approvalPolicy: "untrusted", sandbox: "read-only" },
  ]) {
    test(`client asks ${mode.approvalPolicy} / ${mode.sandbox}: the command is still asked about and the gate decides (allowed)`, async (ctx) => {
      if (!codex) return ctx.skip();
      const b = await startBridge();
      const file = path.join(dir, `mode-${mode.approvalPolicy}.txt`);
      fake.script([{ cmd: `echo real > ${file}`, escalate: true }, { text: "done" }]);
      const t = await b.request("thread/start", { cwd: dir, ...mode });
      expect(t.error, JSON.stringify(t.error)).toBeUndefined();
      const threadId = t.result.thread.id as string;
      await turn(b, threadId, "write the file");
      const run = await until(() => prisma().run.findFirst({ where: { teamId: w.teamId, nativeThreadId: threadId } }), "thread run");
      expect(run.parentRunId).toBe(b.parentRunId);
      expect(await prisma().gateDecision.findFirst({ where: { runId: run.id, decision: "allow" } })).not.toBeNull();
      // No approval request ever reached the client: the bridge answered it.
      expect(b.seen.some((m) => m.method?.endsWith("requestApproval"))).toBe(false);
      expect(commandItems(b).at(-1)?.status).toBe("completed");
      expect(existsSync(file)).toBe(true);
      const done = await until(async () => {
        const o = await prisma().operation.findFirst({ where: { runId: run.id, tool: "codex.commandExecution" } });
        return o?.state === "succeeded" ? o : null;
      }, "command reported succeeded");
      expect(done.operationId).toContain(threadId);
    });
  }

  test("paused longer than QUIESCE_CODEX_MAX_HOLD_MS: the command is declined and does not run", async (ctx) => {
    if (!codex) return ctx.skip();
    const b = await startBridge({ QUIESCE_CODEX_MAX_HOLD_MS: "1500" });
    const file = path.join(dir, "paused.txt");
    const t = await b.request("thread/start", { cwd: dir });
    const threadId = t.result.thread.id as string;
    fake.script([{ text: "warm" }]);
    await turn(b, threadId, "warm up");
    const run = await until(() => prisma().run.findFirst({ where: { teamId: w.teamId, nativeThreadId: threadId } }), "thread run");
    await w.operator.pause(b.parentRunId, "pause real codex");
    fake.script([{ cmd: `echo paused > ${file}`, escalate: true }, { text: "done" }]);
    await turn(b, threadId, "write while paused");
    expect(existsSync(file)).toBe(false);
    expect(await prisma().gateDecision.findFirst({ where: { runId: run.id, decision: "hold" } })).not.toBeNull();
    const item = commandItems(b).at(-1);
    expect(item?.status).toBe("declined");
  });

  test("thread/fork: the fork inherits the source's kill; direct fs/writeFile and command/exec are gated", async (ctx) => {
    if (!codex) return ctx.skip();
    const b = await startBridge();
    const t = await b.request("thread/start", { cwd: dir });
    const threadId = t.result.thread.id as string;
    fake.script([{ text: "warm" }]);
    await turn(b, threadId, "warm up");
    const source = await until(() => prisma().run.findFirst({ where: { teamId: w.teamId, nativeThreadId: threadId } }), "source run");
    const f = await b.request("thread/fork", { threadId });
    expect(f.error, JSON.stringify(f.error)).toBeUndefined();
    const forkId = f.result.thread.id as string;
    expect(f.result.thread.forkedFromId).toBe(threadId);
    fake.script([{ text: "fork warm" }]);
    await turn(b, forkId, "warm the fork");
    const fork = await until(() => prisma().run.findFirst({ where: { teamId: w.teamId, nativeThreadId: forkId } }), "fork run");
    expect(fork).toMatchObject({ parentRunId: source.id, forkedFromRunId: source.id });

    const allowed = path.join(dir, "direct-ok.txt");
    const ok = await b.request("fs/writeFile", { path: allowed, dataBase64: Buffer.from("ok").toString("base64") });
    expect(ok.error, JSON.stringify(ok.error)).toBeUndefined();
    expect(existsSync(allowed)).toBe(true);

    await w.operator.kill(source.id, "kill the source thread");
    const file = path.join(dir, "fork-escape.txt");
    fake.script([{ cmd: `echo escape > ${file}`, escalate: true }, { text: "done" }]);
    const r = await b.request("turn/start", { threadId: forkId, input: [{ type: "text", text: "escape" }] });
    if (!r.error) await b.waitFor((m) => m.method === "turn/completed" && m.params?.turn?.id === r.result.turn.id, "fork turn end");
    expect(existsSync(file)).toBe(false);
    const denied = path.join(dir, "direct-denied.txt");
    const refused = await b.request("fs/writeFile", { path: denied, dataBase64: Buffer.from("no").toString("base64") });
    expect(refused.error?.message).toMatch(/Quiesce/);
    expect(existsSync(denied)).toBe(false);
    const touched = path.join(dir, "exec-denied.txt");
    const exec = await b.request("command/exec", { command: ["touch", touched] });
    expect(exec.error?.message).toMatch(/Quiesce/);
    expect(existsSync(touched)).toBe(false);
  });

  test("a kill mid-turn: the bridge interrupts the turn and the command never runs", async (ctx) => {
    if (!codex) return ctx.skip();
    const b = await startBridge();
    const file = path.join(dir, "killed.txt");
    const t = await b.request("thread/start", { cwd: dir });
    const threadId = t.result.thread.id as string;
    fake.script([{ text: "warm" }]);
    await turn(b, threadId, "warm up");
    await until(() => prisma().run.findFirst({ where: { teamId: w.teamId, nativeThreadId: threadId } }), "thread run");
    fake.script([
      {
        cmd: `echo killed > ${file}`,
        escalate: true,
        before: async () => {
          await w.operator.kill(b.parentRunId, "kill real codex");
        },
      },
      { text: "done" },
    ]);
    const done = await turn(b, threadId, "write after kill");
    expect(["interrupted", "completed", "failed"]).toContain(done.params.turn.status);
    expect(existsSync(file)).toBe(false);
    const refused = await b.request("turn/start", { threadId, input: [{ type: "text", text: "again" }] });
    expect(refused.error?.message).toMatch(/killed/);
  });

  test("under --supervise: an interrupted turn's shell child is gone once the session's run is killed, listed in the evidence with how it ended", async (ctx) => {
    if (!codex) return ctx.skip();
    const b = await startBridge({ XDG_STATE_HOME: path.join(dir, "state") }, ["--supervise", "--grace", "0.5"]);
    const t = await b.request("thread/start", { cwd: dir });
    const threadId = t.result.thread.id as string;
    // A duration no other test uses, so the process is ours: the turn's shell child.
    const sleeper = `sleep ${900 + (process.pid % 90)}`;
    fake.script([{ cmd: sleeper, escalate: true }, { text: "done" }]);
    const r = await b.request("turn/start", { threadId, input: [{ type: "text", text: "wait a long time" }] });
    expect(r.error, JSON.stringify(r.error)).toBeUndefined();
    const thread = await until(() => prisma().run.findFirst({ where: { teamId: w.teamId, nativeThreadId: threadId } }), "thread run");
    const supervised = await prisma().run.findUniqueOrThrow({ where: { id: thread.parentRunId! } });
    expect(supervised).toMatchObject({ harness: "codex", taskId: "codex:app-server" });
    const pids = await until(() => {
      const found = pidsOf(sleeper);
      return found.length ? found : null;
    }, "the turn's shell child");
    // The supervisor lists a process once it has seen it, and keeps the command line it last read (Codex's
    // sandbox wrapper execs into the shell child under the same pid): wait for that record before the interrupt may end it.
    await until(
      () => pids.every((p) => supervisorSaw(path.join(dir, "state"), p, sleeper)) || null,
      "the supervisor's record of the shell child",
    );

    // The thread's own kill: the bridge interrupts the turn. The interrupt does not promise that the
    // turn's shell child ends (sometimes it outlives it, sometimes not): the evidence says which.
    await w.operator.kill(thread.id, "real codex under exec: kill the thread");
    const done = await b.waitFor((m) => m.method === "turn/completed" && m.params?.turn?.id === r.result.turn.id, "the interrupted turn");
    expect(done.params.turn.status).toBe("interrupted");
    // The session's run: the supervisor empties the app-server's whole tree.
    const { barrierId } = await w.operator.kill(supervised.id, "real codex under exec: kill");
    const exit = await new Promise<number | null>((res) =>
      b.child.exitCode !== null ? res(b.child.exitCode) : b.child.once("exit", (c) => res(c)),
    );
    expect(exit, b.stderr.slice(-3000)).toBe(137);
    expect(
      pids.filter((p) => pidsOf(sleeper).includes(p)),
      "the shell child is gone",
    ).toEqual([]);
    const barrier = await prisma().barrier.findUniqueOrThrow({ where: { id: barrierId } });
    expect(barrier.observedMeaning).toBe("process_terminated");
    const acks = barrier.observedEvidence as {
      runId: string;
      evidence: { environment?: { processes: { pid: number; cmdline: string; ended: string; endedAt: string | null }[] } };
    }[];
    const procs = acks.find((a) => a.runId === supervised.id)?.evidence.environment?.processes ?? [];
    const shell = procs.find((p) => pids.includes(p.pid));
    expect(shell?.cmdline, JSON.stringify(procs)).toBe(sleeper);
    expect(shell?.endedAt).not.toBeNull();
    expect(shell?.ended).toMatch(/^(exited|after_sigterm|after_sigkill)$/);
    expect(procs.find((p) => p.cmdline.includes("app-server"))?.ended).toMatch(/^after_sig(term|kill)$/);
  });
});

/** pids of live processes whose command line is exactly `cmd`. */
function pidsOf(cmd: string): number[] {
  return listPids().filter((pid) => readCmdline(pid) === cmd);
}

/** Whether a supervisor's saved state under `stateHome` (its state files, docs/environment.md) records process `pid`. */
function supervisorSaw(stateHome: string, pid: number, cmdline: string): boolean {
  const files = readdirSync(stateHome, { recursive: true, encoding: "utf8" }).filter((f) => f.endsWith(".json"));
  return files.some((f) => {
    try {
      const state = JSON.parse(readFileSync(path.join(stateHome, f), "utf8")) as {
        processes?: Record<string, { pid?: number; cmdline?: string }>;
      };
      return Object.values(state.processes ?? {}).some((r) => r.pid === pid && r.cmdline === cmdline);
    } catch {
      return false; // being rewritten
    }
  });
}
