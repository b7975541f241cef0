// The Codex app-server bridge as a child process between a JSON-RPC client (this test) and a scripted
// app-server process (fixtures/codex-app-server.mjs) that follows the documented message shapes.
// Real API, real database: approvals answered from the gate, holds while paused, and on kill
// turn/interrupt — with "observed by target" recorded only when turn/completed says interrupted.
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { existsSync, readFileSync, rmSync } from "node:fs";
import net from "node:net";
import path from "node:path";
import { createInterface } from "node:readline";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { prisma } from "../../lib/platform/db/prisma";
import { closePool } from "../../lib/platform/db/pool";
import { FIXTURES, makeWorld, ROOT, runProcess, stopChild, tempDir, TSX, until, type World } from "./support";

let w: World;
const dirs: string[] = [];
const peers: Peer[] = [];
beforeAll(async () => {
  w = await makeWorld();
}, 60_000);
afterAll(async () => {
  await Promise.allSettled(peers.map((p) => p.close()));
  await w?.api.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  await closePool();
  await prisma().$disconnect();
});

type Msg = { id?: number | string; method?: string; params?: any; result?: any; error?: { code: number; message: string } };

/** The app-server client side: JSONL over the bridge's stdin/stdout. */
class Peer {
  readonly seen: Msg[] = [];
  private next = 1;
  private waiters: { pred: (m: Msg) => boolean; resolve: (m: Msg) => void }[] = [];
  stderr = "";
  constructor(
    readonly child: ChildProcessWithoutNullStreams,
    readonly dir: string,
    readonly parentRunId: string,
  ) {
    createInterface({ input: child.stdout }).on("line", (line) => {
      const m = JSON.parse(line) as Msg;
      this.seen.push(m);
      this.waiters = this.waiters.filter((wt) => (wt.pred(m) ? (wt.resolve(m), false) : true));
    });
    child.stderr.on("data", (d) => (this.stderr += d));
  }
  send(m: Msg) {
    this.child.stdin.write(`${JSON.stringify(m)}\n`);
  }
  waitFor(pred: (m: Msg) => boolean): Promise<Msg> {
    const hit = this.seen.find(pred);
    if (hit) return Promise.resolve(hit);
    return new Promise((resolve) => this.waiters.push({ pred, resolve }));
  }
  async request(method: string, params: unknown): Promise<Msg> {
    const id = this.next++;
    this.send({ method, id, params });
    return this.waitFor((m) => m.id === id && m.method === undefined);
  }
  /** What the app-server received (the fixture's log). */
  received(): Msg[] {
    const f = path.join(this.dir, "app-server.log");
    return existsSync(f)
      ? readFileSync(f, "utf8")
          .trim()
          .split("\n")
          .filter(Boolean)
          .map((l) => JSON.parse(l) as Msg)
      : [];
  }
  async close() {
    this.child.stdin.end();
    await stopChild(this.child);
  }
}

async function startBridge(
  opts: { interrupt?: "ignore"; url?: string; env?: Record<string, string>; flags?: (parentRunId: string) => string[] } = {},
): Promise<Peer> {
  const parent = await w.agent.createRun({ taskId: "codex-bridge-test", title: "Codex session" });
  const dir = tempDir("codex");
  dirs.push(dir);
  // The plain-node entry a Codex launcher would use (the CLI registry path is checked below).
  const child = spawn(
    process.execPath,
    [
      "bin/quiesce-adapter.mjs",
      "codex-bridge",
      ...(opts.flags ?? ((id) => ["--run", id]))(parent.runId),
      "--",
      process.execPath,
      path.join(FIXTURES, "codex-app-server.mjs"),
    ],
    {
      cwd: ROOT,
      stdio: ["pipe", "pipe", "pipe"],
      env: {
        ...process.env,
        QUIESCE_URL: opts.url ?? w.api.url,
        QUIESCE_API_KEY: w.agentKey,
        FIXTURE_LOG: path.join(dir, "app-server.log"),
        FIXTURE_EFFECT_DIR: dir,
        FIXTURE_INTERRUPT: opts.interrupt ?? "",
        ...opts.env,
      },
    },
  );
  const peer = new Peer(child, dir, parent.runId);
  peers.push(peer);
  const init = await peer.request("initialize", { clientInfo: { name: "quiesce_test", title: "Quiesce test", version: "0.0.1" } });
  expect(init.result.userAgent).toMatch(/fixture/);
  peer.send({ method: "initialized" });
  return peer;
}

async function startThread(peer: Peer): Promise<string> {
  const r = await peer.request("thread/start", { cwd: "/work" });
  return r.result.thread.id as string;
}

async function startTurn(peer: Peer, threadId: string, text: string): Promise<string> {
  const r = await peer.request("turn/start", { threadId, input: [{ type: "text", text }] });
  return r.result.turn.id as string;
}

const decisions = (peer: Peer) =>
  peer
    .received()
    .filter((m) => m.method === undefined && m.result?.decision !== undefined)
    .map((m) => m.result.decision as string);
const threadRun = (threadId: string) =>
  until(() => prisma().run.findFirst({ where: { nativeThreadId: threadId, teamId: w.teamId } }), `run of ${threadId}`);

// Each test starts its own bridge process (tsx + the CLI registry): slow to boot on a shared machine.
const T = 120_000;

describe("approvals from the gate", { timeout: T }, () => {
  test("a command approval is accepted by the bridge (the client never sees the request); the run carries thread and turn ids", async () => {
    const peer = await startBridge();
    const threadId = await startThread(peer);
    const turnId = await startTurn(peer, threadId, "run: echo hi");
    const done = await peer.waitFor((m) => m.method === "turn/completed" && m.params.turn.id === turnId);
    expect(done.params.turn.status).toBe("completed");
    expect(peer.seen.some((m) => m.method?.endsWith("requestApproval"))).toBe(false);
    expect(peer.seen.find((m) => m.method === "item/completed")!.params.item.status).toBe("completed");
    expect(decisions(peer)).toEqual(["accept"]);

    const run = await threadRun(threadId);
    expect(run).toMatchObject({
      harness: "codex",
      parentRunId: peer.parentRunId,
      nativeSessionId: threadId,
      nativeThreadId: threadId,
      nativeTurnId: turnId,
    });
    const op = await until(async () => {
      const o = await prisma().operation.findFirst({ where: { runId: run.id, tool: "codex.commandExecution" } });
      return o?.state === "succeeded" ? o : null;
    }, "operation succeeded");
    expect(op.operationId).toBe(`codex-${threadId}-${turnId}-item_3`);
  });

  test("a file-change approval is gated the same way; never acceptForSession", async () => {
    const peer = await startBridge();
    const threadId = await startThread(peer);
    const turnId = await startTurn(peer, threadId, "edit: src/app.ts");
    await peer.waitFor((m) => m.method === "turn/completed" && m.params.turn.id === turnId);
    expect(decisions(peer)).toEqual(["accept"]);
    const run = await threadRun(threadId);
    expect(await prisma().operation.findFirst({ where: { runId: run.id, tool: "codex.fileChange" } })).toMatchObject({ kind: "call" });
  });

  test("paused: the approval waits (the turn waits with it) and is accepted after resume", async () => {
    const peer = await startBridge();
    const threadId = await startThread(peer);
    await startTurn(peer, threadId, "warm up"); // registers the thread's run
    const run = await threadRun(threadId);
    await w.operator.pause(peer.parentRunId, "hold codex");
    const turnId = await startTurn(peer, threadId, "run: deploy");
    await until(() => prisma().gateDecision.findFirst({ where: { runId: run.id, decision: "hold" } }), "held approval");
    expect(decisions(peer)).toEqual([]);
    await w.operator.resume(peer.parentRunId, "release codex");
    await peer.waitFor((m) => m.method === "turn/completed" && m.params.turn.id === turnId);
    expect(decisions(peer)).toEqual(["accept"]);
  });

  test("control plane unreachable: the approval is declined (fail closed; this action only, the turn goes on)", async () => {
    const port = await closedPort();
    const peer = await startBridge({ url: `http://127.0.0.1:${port}` });
    const threadId = await startThread(peer);
    await startTurn(peer, threadId, "run: rm -rf /");
    await peer.waitFor((m) => m.method === "item/completed");
    expect(decisions(peer)).toEqual(["decline"]);
    expect(existsSync(path.join(peer.dir, "item_3.effect"))).toBe(false);
  });
});

describe("full gating", { timeout: T }, () => {
  test("thread/start, thread/fork and turn/start reach the app-server with approval policy untrusted and a read-only sandbox, whatever the client asked", async () => {
    const peer = await startBridge();
    const t = await peer.request("thread/start", {
      cwd: "/work",
      approvalPolicy: "never",
      sandbox: "danger-full-access",
      approvalsReviewer: "auto_review",
      config: { approval_policy: "never", model: "m" },
    });
    const threadId = t.result.thread.id as string;
    await peer.request("turn/start", {
      threadId,
      input: [{ type: "text", text: "hello" }],
      approvalPolicy: "never",
      sandboxPolicy: { type: "dangerFullAccess" },
    });
    await peer.request("thread/fork", { threadId, approvalPolicy: "on-request", sandbox: "workspace-write" });
    const got = peer.received();
    const start = got.find((m) => m.method === "thread/start")!.params;
    expect(start).toMatchObject({ approvalPolicy: "untrusted", sandbox: "read-only", approvalsReviewer: "user", config: { model: "m" } });
    expect(start.config.approval_policy).toBeUndefined();
    expect(got.find((m) => m.method === "turn/start")!.params).toMatchObject({
      approvalPolicy: "untrusted",
      sandboxPolicy: { type: "readOnly", networkAccess: false },
    });
    expect(got.find((m) => m.method === "thread/fork")!.params).toMatchObject({ approvalPolicy: "untrusted", sandbox: "read-only" });
  });

  test("direct client calls go through the gate: allowed before a kill, refused (never forwarded) after it", async () => {
    const peer = await startBridge();
    const file = path.join(peer.dir, "direct.txt");
    const ok = await peer.request("fs/writeFile", { path: file, dataBase64: Buffer.from("one").toString("base64") });
    expect(ok.error).toBeUndefined();
    expect(readFileSync(file, "utf8")).toBe("one");
    const op = await until(
      () => prisma().operation.findFirst({ where: { teamId: w.teamId, tool: "codex.fs/writeFile", state: "succeeded" } }),
      "direct op recorded",
    );
    expect(op.runId).not.toBe(peer.parentRunId);
    await w.operator.kill(peer.parentRunId, "stop codex direct calls");
    const refused = await peer.request("fs/writeFile", { path: file, dataBase64: Buffer.from("two").toString("base64") });
    expect(refused.error?.message).toMatch(/Quiesce: fs\/writeFile refused/);
    const exec = await peer.request("command/exec", { command: ["rm", "-rf", "/tmp/x"] });
    expect(exec.error?.message).toMatch(/Quiesce: command\/exec/);
    expect(readFileSync(file, "utf8")).toBe("one");
    expect(peer.received().filter((m) => m.method === "fs/writeFile")).toHaveLength(1);
    expect(peer.received().some((m) => m.method === "command/exec")).toBe(false);
  });

  test("a hold longer than QUIESCE_CODEX_MAX_HOLD_MS declines the one action; the turn is not cancelled", async () => {
    const peer = await startBridge({ env: { QUIESCE_CODEX_MAX_HOLD_MS: "1500" } });
    const threadId = await startThread(peer);
    await startTurn(peer, threadId, "warm up");
    await threadRun(threadId);
    await w.operator.pause(peer.parentRunId, "hold codex");
    await startTurn(peer, threadId, "run: deploy");
    await until(() => decisions(peer).length > 0, "the held approval's answer");
    expect(decisions(peer)).toEqual(["decline"]);
    expect(existsSync(path.join(peer.dir, "item_4.effect"))).toBe(false);
    expect(peer.received().some((m) => m.method === "turn/interrupt")).toBe(false);
  });

  test("every turn's native id is recorded, not only the first", async () => {
    const peer = await startBridge();
    const threadId = await startThread(peer);
    const first = await startTurn(peer, threadId, "turn one");
    const run = await threadRun(threadId);
    expect(run.nativeTurnId).toBe(first);
    const second = await startTurn(peer, threadId, "turn two");
    await until(
      async () => (await prisma().run.findUniqueOrThrow({ where: { id: run.id } })).nativeTurnId === second,
      "second turn recorded",
    );
    const audit = await prisma().auditEvent.findMany({ where: { target: run.id, action: "run.native_turn" } });
    expect(audit.map((a) => (a.after as { turnId: string }).turnId)).toEqual([second]);
  });

  test("thread/fork: the fork's run is the source run's child with the lineage recorded, and a kill of the source reaches it", async () => {
    const peer = await startBridge();
    const threadId = await startThread(peer);
    await startTurn(peer, threadId, "warm up");
    const source = await threadRun(threadId);
    const f = await peer.request("thread/fork", { threadId });
    const forkId = f.result.thread.id as string;
    await startTurn(peer, forkId, "warm up the fork");
    const fork = await threadRun(forkId);
    expect(fork).toMatchObject({ parentRunId: source.id, forkedFromRunId: source.id, nativeThreadId: forkId });
    await w.operator.kill(source.id, "kill the source thread");
    await startTurn(peer, forkId, "run: escape").catch(() => undefined);
    await until(
      () => decisions(peer).length > 0 || peer.received().some((m) => m.method === "turn/interrupt" && m.params.threadId === forkId),
      "the fork is stopped",
    );
    expect(decisions(peer)).not.toContain("accept");
  });
});

describe("kill", { timeout: T }, () => {
  test("turn/interrupt {threadId, turnId}; turn/completed interrupted → observed by target (turn_interrupted); no new turns", async () => {
    const peer = await startBridge();
    const threadId = await startThread(peer);
    const turnId = await startTurn(peer, threadId, "think for a long time");
    const run = await threadRun(threadId);
    const { barrierId } = await w.operator.kill(peer.parentRunId, "stop codex");

    const interrupted = await peer.waitFor((m) => m.method === "turn/completed" && m.params.turn.id === turnId);
    expect(interrupted.params.turn.status).toBe("interrupted");
    expect(
      peer
        .received()
        .filter((m) => m.method === "turn/interrupt")
        .map((m) => m.params),
    ).toEqual([{ threadId, turnId }]);
    // The bridge's own request and its response never reach the client.
    expect(peer.seen.some((m) => typeof m.id === "string" && String(m.id).startsWith("quiesce-bridge-"))).toBe(false);

    const barrier = await until(async () => {
      const b = await prisma().barrier.findUnique({ where: { id: barrierId } });
      return b?.observedAt ? b : null;
    }, "observed by target");
    expect(barrier.observedMeaning).toBe("turn_interrupted");
    expect(JSON.stringify(barrier.observedEvidence)).toContain(turnId);
    expect((barrier.observedEvidence as Array<{ runId: string }>)[0]!.runId).toBe(run.id);

    const refused = await peer.request("turn/start", { threadId, input: [{ type: "text", text: "one more" }] });
    expect(refused.error?.message).toMatch(/killed/);
    expect(peer.received().filter((m) => m.method === "turn/start")).toHaveLength(1);
  });

  test("an approval held by a pause is cancelled by the kill, and the turn is interrupted", async () => {
    const peer = await startBridge();
    const threadId = await startThread(peer);
    await startTurn(peer, threadId, "warm up");
    const run = await threadRun(threadId);
    await w.operator.pause(peer.parentRunId, "hold");
    const turnId = await startTurn(peer, threadId, "run: drop table users");
    await until(() => prisma().gateDecision.findFirst({ where: { runId: run.id, decision: "hold" } }), "held approval");
    await w.operator.kill(peer.parentRunId, "kill while held");
    await peer.waitFor((m) => m.method === "turn/completed" && m.params.turn.id === turnId);
    // The held approval's answer and the interrupt travel separately: the app-server may finish the
    // turn before the "cancel" reaches it. Wait for the answer; what matters is what it says.
    await until(() => decisions(peer).length > 0, "the held approval's answer");
    expect(decisions(peer)).toEqual(["cancel"]);
    expect(existsSync(path.join(peer.dir, "item_4.effect"))).toBe(false);
    expect(peer.received().some((m) => m.method === "turn/interrupt" && m.params.turnId === turnId)).toBe(true);
  });

  test("an app-server that never completes the interrupt: the ladder stays pending / uncertain", async () => {
    const peer = await startBridge({ interrupt: "ignore" });
    const threadId = await startThread(peer);
    const turnId = await startTurn(peer, threadId, "think");
    await threadRun(threadId);
    const { barrierId } = await w.operator.kill(peer.parentRunId, "stop a deaf codex");
    await until(() => peer.received().some((m) => m.method === "turn/interrupt" && m.params.turnId === turnId), "turn/interrupt sent");
    // One more round trip through the bridge: everything it had to do about the interrupt is done.
    await peer.request("thread/start", {});
    expect(peer.seen.some((m) => m.method === "turn/completed")).toBe(false);
    const b = await prisma().barrier.findUniqueOrThrow({ where: { id: barrierId } });
    expect({ observedAt: b.observedAt, observedMeaning: b.observedMeaning }).toEqual({ observedAt: null, observedMeaning: null });
    const view = await w.operator.getBarrier(barrierId);
    const rung = view.ladder.observed_by_target as { status: string; at: string | null };
    expect(["pending", "uncertain"]).toContain(rung.status);
    expect(rung.at).toBeNull();
  });
});

function closedPort(): Promise<number> {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

test("lifetime: the bridge ends with its app-server (its exit status), and closing the client ends both", async () => {
  const a = await startBridge();
  const exitA = new Promise<number | null>((r) => a.child.once("exit", (code) => r(code)));
  a.send({ method: "fixture/exit", id: 99, params: {} });
  expect(await exitA).toBe(7);
  const b = await startBridge();
  const exitB = new Promise<number | null>((r) => b.child.once("exit", (code) => r(code)));
  b.child.stdin.end();
  expect(await exitB).toBe(0);
}, 120_000);

test("`quiesce codex-bridge` through the CLI registry: bad usage is exit 2 and changes nothing", async () => {
  const before = await prisma().run.count({ where: { teamId: w.teamId } });
  const noCmd = await runProcess(TSX, ["--conditions=react-server", "bin/quiesce.ts", "codex-bridge", "--run", "run_x"], "", {
    ...process.env,
    QUIESCE_URL: w.api.url,
    QUIESCE_API_KEY: w.agentKey,
  });
  expect(noCmd.code).toBe(2);
  expect(noCmd.stderr).toMatch(/after `--`/);
  const noKey = await runProcess(TSX, ["--conditions=react-server", "bin/quiesce.ts", "codex-bridge", "--", "codex", "app-server"], "", {
    ...process.env,
    QUIESCE_URL: w.api.url,
    QUIESCE_API_KEY: "",
  });
  expect(noKey.code).toBe(2);
  expect(noKey.stderr).toMatch(/QUIESCE_API_KEY/);
  expect(await prisma().run.count({ where: { teamId: w.teamId } })).toBe(before);
}, 120_000);

describe("under quiesce exec (--supervise)", { timeout: T }, () => {
  test("the threads are children of the supervised run; its kill ends a turn's background shell, listed in the evidence", async () => {
    const dir = tempDir("codex-supervise");
    dirs.push(dir);
    const peer = await startBridge({ flags: () => ["--supervise", "--grace", "0.5"], env: { XDG_STATE_HOME: dir } });
    const threadId = await startThread(peer);
    const sleeper = `sleep ${800 + (process.pid % 100)}`;
    await startTurn(peer, threadId, `shell: ${sleeper}`);
    const thread = await threadRun(threadId);
    const supervised = await prisma().run.findUniqueOrThrow({ where: { id: thread.parentRunId! } });
    expect(supervised).toMatchObject({ harness: "codex", taskId: "codex:app-server" });
    expect(await prisma().runEnvironment.findUnique({ where: { runId: supervised.id } })).not.toBeNull();
    const pgrep = async () => (await runProcess("pgrep", ["-fx", sleeper], "", process.env)).stdout.trim();
    await until(async () => (await pgrep()) !== "", "the turn's background shell");

    const { barrierId } = await w.operator.kill(supervised.id, "codex under exec: kill");
    await until(async () => (await pgrep()) === "", "the background shell to end", 20_000);
    const b = await until(async () => {
      const row = await prisma().barrier.findUniqueOrThrow({ where: { id: barrierId } });
      return row.observedMeaning === "process_terminated" ? row : null;
    }, "the supervisor's evidence");
    const acks = b.observedEvidence as { runId: string; evidence: { environment?: { processes: { cmdline: string; ended: string }[] } } }[];
    const procs = acks.find((a) => a.runId === supervised.id)?.evidence.environment?.processes ?? [];
    expect(procs.find((p) => p.cmdline === sleeper)?.ended, JSON.stringify(procs)).toMatch(/^after_sig/);
    expect(procs.some((p) => p.cmdline.includes("codex-app-server.mjs"))).toBe(true);
  });
});
