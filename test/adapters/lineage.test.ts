// No escape by resume or fork: a Claude Code session started with --resume/--fork-session (a new
// session id whose transcript carries the source session's entries) becomes the source run's child,
// records the lineage, and inherits its kill — whether the kill came before or after the fork.
// The hook runs as Claude Code runs it: a fresh process per event, against the real API and database.
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, expect, test } from "vitest";
import { prisma } from "../../lib/platform/db/prisma";
import { closePool } from "../../lib/platform/db/pool";
import { QuiesceApiError } from "../../lib/agent/sdk/errors";
import { makeWorld, ROOT, runProcess, tempDir, type World } from "./support";

let w: World;
let dir: string;
beforeAll(async () => {
  w = await makeWorld();
  dir = tempDir("lineage");
  mkdirSync(path.join(dir, "transcripts"));
}, 60_000);
afterAll(async () => {
  await w?.api.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
  await closePool();
  await prisma().$disconnect();
});

let seq = 0;
const sid = () => `lin-${process.pid}-${++seq}-${Date.now().toString(36)}`;
const transcript = (s: string) => path.join(dir, "transcripts", `${s}.jsonl`);
/** A forked transcript: the source's entries (their own sessionId) followed by the new session's. */
function writeTranscript(session: string, entriesFrom: string[]) {
  const lines = [...entriesFrom, session].map((id, i) =>
    JSON.stringify({
      type: i % 2 ? "assistant" : "user",
      uuid: `u${i}`,
      sessionId: id,
      message: { content: "hi" },
      timestamp: new Date().toISOString(),
    }),
  );
  writeFileSync(transcript(session), `${lines.join("\n")}\n`);
}
async function hook(event: Record<string, unknown>) {
  const r = await runProcess(process.execPath, [path.join(ROOT, "bin/quiesce-hook.mjs"), "claude-code"], JSON.stringify(event), {
    ...process.env,
    QUIESCE_URL: w.api.url,
    QUIESCE_API_KEY: w.agentKey,
    QUIESCE_HOOK_STATE_DIR: path.join(dir, "state"),
    QUIESCE_HOOK_TIMEOUT_MS: "30000",
  });
  return { ...r, json: r.stdout.trim() ? JSON.parse(r.stdout) : null };
}
const start = (s: string, source = "startup") =>
  hook({ session_id: s, transcript_path: transcript(s), cwd: dir, hook_event_name: "SessionStart", source });
const pre = (s: string, id: string) =>
  hook({
    session_id: s,
    transcript_path: transcript(s),
    cwd: dir,
    hook_event_name: "PreToolUse",
    tool_name: "Bash",
    tool_input: { command: "ls" },
    tool_use_id: id,
  });
const runOf = (s: string) => prisma().run.findFirst({ where: { teamId: w.teamId, nativeSessionId: s } });

test("a fork of a live session becomes its child with the lineage recorded, and a later kill of the source stops it", async () => {
  const a = sid();
  writeTranscript(a, []);
  expect((await start(a)).code).toBe(0);
  const runA = (await runOf(a))!;
  const b = sid();
  writeTranscript(b, [a, a]);
  expect((await start(b, "resume")).code).toBe(0);
  const runB = (await runOf(b))!;
  expect(runB).toMatchObject({ parentRunId: runA.id, rootRunId: runA.id, forkedFromRunId: runA.id, harness: "claude_code" });
  expect(await pre(b, `toolu_${b}_1`)).toMatchObject({ code: 0, stdout: "" });

  await w.operator.kill(runA.id, "lineage test");
  const denied = await pre(b, `toolu_${b}_2`);
  expect(denied.json).toMatchObject({ continue: false, hookSpecificOutput: { permissionDecision: "deny" } });
  expect(denied.json.hookSpecificOutput.permissionDecisionReason).toContain("parent_revoked");
});

test("a fork (or a fork of a fork) of a killed session is stopped at SessionStart and every tool call is denied", async () => {
  const a = sid();
  writeTranscript(a, []);
  await start(a);
  const b = sid();
  writeTranscript(b, [a]);
  await start(b, "resume");
  await w.operator.kill((await runOf(a))!.id, "lineage test");

  const c = sid();
  writeTranscript(c, [a, b]); // forked from b, which was forked from a
  const s = await start(c, "resume");
  expect(s.json).toMatchObject({ continue: false });
  expect(s.json.stopReason).toContain("forked from was killed");
  const d = await pre(c, `toolu_${c}_1`);
  expect(d.code).toBe(0);
  expect(d.json).toMatchObject({ continue: false, hookSpecificOutput: { permissionDecision: "deny" } });
  expect(await runOf(c)).toBeNull();
});

test("a resume whose transcript is not written yet is not cached: the first tool call finds the lineage", async () => {
  const a = sid();
  writeTranscript(a, []);
  await start(a);
  const runA = (await runOf(a))!;
  const b = sid();
  expect((await start(b, "resume")).code).toBe(0); // no transcript yet
  writeTranscript(b, [a]);
  await w.operator.kill(runA.id, "lineage test");
  const d = await pre(b, `toolu_${b}_1`);
  expect(d.json).toMatchObject({ continue: false, hookSpecificOutput: { permissionDecision: "deny" } });
});

test("a fork whose transcript does not show its source yet registers nothing, and its tool calls are refused until it does", async () => {
  const a = sid();
  writeTranscript(a, []);
  await start(a);
  await w.operator.kill((await runOf(a))!.id, "lineage test");
  const b = sid();
  // Only the fork's own first entry: the history copied from a is not written yet.
  const own = { type: "user", uuid: `fresh-${b}`, sessionId: b, message: { content: "hi" }, timestamp: new Date().toISOString() };
  writeFileSync(transcript(b), `${JSON.stringify(own)}\n`);
  expect((await start(b, "fork")).code).toBe(0);
  expect(await runOf(b)).toBeNull(); // a root run here would be an escape from a's kill
  const early = await pre(b, `toolu_${b}_1`);
  expect(early.code).toBe(2); // the source still can't be found: fail closed
  expect(await runOf(b)).toBeNull();
  writeTranscript(b, [a]); // the copied history lands
  const d = await pre(b, `toolu_${b}_2`);
  expect(d.json).toMatchObject({ continue: false, hookSpecificOutput: { permissionDecision: "deny" } });
});

test("the API: forkedFrom names its field on refusal and never crosses teams", async () => {
  const root = await w.agent.createRun({ taskId: "lineage-api", native: { sessionId: sid() } });
  await expect(w.agent.createRun({ taskId: "x", parentRunId: root.runId, forkedFrom: { runId: root.runId } })).rejects.toMatchObject({
    status: 400,
    message: expect.stringContaining("forkedFrom"),
  });
  await expect(w.agent.createRun({ taskId: "x", forkedFrom: { runId: "run_doesnotexist" } })).rejects.toBeInstanceOf(QuiesceApiError);
  const fork = await w.agent.createRun({ taskId: "x", forkedFrom: { runId: root.runId }, scopes: ["*"] });
  expect(fork.parentRunId).toBe(root.runId);
  // A fork's lease is its own: a root lease, not clamped by the source's.
  const lease = await prisma().lease.findUniqueOrThrow({ where: { id: fork.leaseId } });
  expect(lease).toMatchObject({ parentLeaseId: null, path: [fork.leaseId] });
});
