// `quiesce exec` as a real process against the real API server and database
// (docs/environment.md): an operator's pause freezes the command's whole tree, resume thaws
// it, kill empties it and the run's barrier records `process_terminated` with the process evidence; bad
// input exits 2 and starts nothing.
import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync, readdirSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { makeWorld, ROOT, runRow, tempDir, until, type World } from "../adapters/support";
import { advancePendingStops } from "@/lib/modules/stop/stops";
import type { StopView } from "@/lib/schemas/stops";
import { runCli } from "../cli/run-cli";
import { prisma } from "@/lib/platform/db/prisma";
import { openContainer } from "@/lib/agent/supervisor/container";
import { readCmdline, readStat } from "@/lib/agent/supervisor/proc";
import { asEnvironmentEvidence } from "@/lib/control/evidence/environment";
import { alive, size, treeScript, writesFile } from "./helpers";

let w: World;
const children: ChildProcess[] = [];
beforeAll(async () => {
  w = await makeWorld();
});
afterAll(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
  await w?.api.close();
});

function startExec(args: string[], stateDir: string) {
  const child = spawn(
    process.execPath,
    [
      "--conditions=react-server",
      "--import",
      "tsx",
      path.join(ROOT, "bin/quiesce.ts"),
      "exec",
      "--url",
      w.api.url,
      "--key",
      w.agentKey,
      "--state-dir",
      stateDir,
      ...args,
    ],
    { cwd: ROOT, stdio: ["ignore", "ignore", "pipe"] },
  );
  children.push(child);
  let stderr = "";
  child.stderr!.on("data", (d) => (stderr += d));
  const exited = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
  return { child, exited, stderr: () => stderr };
}

function container(stateDir: string) {
  const f = readdirSync(stateDir).find((n) => n.endsWith(".json"));
  return f ? openContainer(JSON.parse(readFileSync(path.join(stateDir, f), "utf8")).handle) : null;
}

function members(stateDir: string) {
  return container(stateDir)?.members() ?? [];
}

it("pause freezes the tree, resume thaws it, kill empties it and reports the evidence", async () => {
  const dir = tempDir("exec-cli");
  const stateDir = path.join(dir, "state");
  const ex = startExec(["--grace", "0.3", "--task", "exec-test", "--", "sh", "-c", treeScript(dir)], stateDir);
  const runId = await until(() => /\] (run_[A-Za-z0-9_-]+): sh started/.exec(ex.stderr())?.[1], "exec to start", 30_000);
  await until(
    () => ["sleep 600", "sleep 601", "sleep 602"].every((c) => members(stateDir).some((m) => readCmdline(m.pid) === c)),
    "the tree",
    10_000,
  );
  await until(() => size(writesFile(dir)) > 0, "writes");

  await w.operator.pause(runId, "exec test: pause");
  await until(() => /paused — \d+ processes frozen/.test(ex.stderr()), "the tree to freeze", 10_000);
  const before = size(writesFile(dir));
  await new Promise((r) => setTimeout(r, 300));
  expect(size(writesFile(dir)), "no write while paused").toBe(before);

  await w.operator.resume(runId, "exec test: resume");
  await until(() => size(writesFile(dir)) > before, "writes after resume", 10_000);

  const pids = members(stateDir).map((m) => m.pid);
  const { barrierId } = await w.operator.kill(runId, "exec test: kill");
  expect(await ex.exited).toBe(137);
  expect(pids.filter(alive)).toEqual([]);
  expect(pids.map((p) => readStat(p)).filter((s) => s && s.state !== "Z")).toEqual([]);

  const b = await prisma().barrier.findUniqueOrThrow({ where: { id: barrierId } });
  expect(b.observedMeaning).toBe("process_terminated");
  const acks = b.observedEvidence as { runId: string; meaning: string; evidence: { environment: unknown } }[];
  const envAcks = acks.filter((a) => a.runId === runId && asEnvironmentEvidence(a.evidence?.environment));
  expect(envAcks, "exactly one evidence report").toHaveLength(1);
  const ev = asEnvironmentEvidence(envAcks[0]!.evidence.environment)!;
  expect(ev.emptyAt).not.toBeNull();
  expect(ev.survivors).toEqual([]);
  for (const c of ["sleep 600", "sleep 601", "sleep 602"]) expect(ev.processes.find((p) => p.cmdline === c)?.ended).toMatch(/after_sig/);
  expect(
    readdirSync(stateDir).filter((n) => n.endsWith(".json")),
    "state file removed once reported",
  ).toEqual([]);
}, 90_000);

it("follows the fleet stops that match an ancestor: a pause scope freezes, lifting it thaws, a kill scope empties the tree", async () => {
  const dir = tempDir("exec-fleet");
  const stateDir = path.join(dir, "state");
  const prefix = `fleet-exec-${Date.now()}-`;
  // The scopes match the parent only: the supervised child is covered through its ancestor.
  const parent = await w.agent.createRun({ taskId: `${prefix}parent` });
  const ex = startExec(
    [
      "--grace",
      "0.3",
      "--task",
      "fleet-child",
      "--parent",
      parent.runId,
      "--parent-lease",
      parent.leaseId,
      "--",
      "sh",
      "-c",
      treeScript(dir),
    ],
    stateDir,
  );
  const runId = await until(() => /\] (run_[A-Za-z0-9_-]+): sh started/.exec(ex.stderr())?.[1], "exec to start", 30_000);
  await until(() => size(writesFile(dir)) > 0, "writes", 10_000);

  const stop = async (action: "pause" | "kill") =>
    (await w.operator.createStop({ action, filter: { taskPrefix: prefix }, reason: `exec test: fleet ${action}` })) as StopView;
  const pause = await stop("pause");
  expect(await w.agent.getRunControl(runId)).toEqual({ runId, control: "paused", lifecycle: "normal", stopIds: [pause.stopId] });
  await until(() => /paused — \d+ processes frozen/.test(ex.stderr()), "the tree to freeze", 10_000);
  expect(container(stateDir)?.frozen(), "the container reads frozen").toBe(true);
  const before = size(writesFile(dir));
  await new Promise((r) => setTimeout(r, 300));
  expect(size(writesFile(dir)), "no write while the fleet pause holds").toBe(before);

  await w.operator.resumeStop(pause.stopId, "exec test: lift");
  await until(() => size(writesFile(dir)) > before, "writes after the pause is lifted", 10_000);

  const pids = members(stateDir).map((m) => m.pid);
  const kill = await stop("kill");
  // The tree is emptied when the scope commits, before any barrier exists…
  await until(() => pids.every((p) => !alive(p)), "the tree to empty on the kill scope", 10_000);
  expect(await runRow(parent.runId)).toMatchObject({ lifecycle: "normal" });
  // …and the evidence lands on the fan-out's barrier (the parent's, the top-most match).
  expect(await advancePendingStops({ type: "system", name: "test" }, w.teamId)).toBe(1);
  expect(await ex.exited).toBe(137);
  const target = await prisma().stopScopeTarget.findFirstOrThrow({ where: { scopeId: kill.stopId } });
  expect(target.runId).toBe(parent.runId);
  const b = await prisma().barrier.findUniqueOrThrow({ where: { id: target.barrierId! } });
  expect(b.observedMeaning).toBe("process_terminated");
  const acks = b.observedEvidence as { runId: string; evidence: { environment: unknown } }[];
  const ev = asEnvironmentEvidence(acks.find((a) => a.runId === runId)?.evidence?.environment)!;
  expect(ev.emptyAt).not.toBeNull();
  for (const c of ["sleep 600", "sleep 601", "sleep 602"]) expect(ev.processes.find((p) => p.cmdline === c)?.ended).toMatch(/after_sig/);
}, 120_000);

it("bad input: unknown flag, missing command, a killed parent — exit 2, nothing started", async () => {
  const dir = tempDir("exec-bad");
  const marker = path.join(dir, "ran");
  const env = { QUIESCE_URL: w.api.url, QUIESCE_API_KEY: w.agentKey };
  const unknown = await runCli(["exec", "--frobnicate", "--", "sh", "-c", `touch ${marker}`], env);
  expect(unknown.code).toBe(2);
  expect(unknown.stderr).toMatch(/frobnicate/);
  const missing = await runCli(["exec", "--grace", "1"], env);
  expect(missing.code).toBe(2);
  expect(missing.stderr).toMatch(/no command/);
  const badGrace = await runCli(["exec", "--grace", "soon", "--", "true"], env);
  expect(badGrace.code).toBe(2);

  const parent = await w.agent.createRun({ taskId: "exec-killed-parent" });
  await w.operator.kill(parent.runId, "exec test: killed before exec");
  const killed = await runCli(
    ["exec", "--parent", parent.runId, "--parent-lease", parent.leaseId, "--state-dir", dir, "--", "sh", "-c", `touch ${marker}`],
    env,
  );
  expect(killed.code).toBe(2);
  expect(killed.stderr).toMatch(/kill|revoked|409/i);
  expect(() => readFileSync(marker)).toThrow();
}, 90_000);
