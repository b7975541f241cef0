// Every container mechanism against real process trees (docs/environment.md): a
// background job, a double-forked daemon, a setsid child, a process ignoring SIGTERM, a writer, and 200
// processes. Pause freezes all of it (no write happens while paused), resume thaws it, kill empties it
// and the evidence names every process and how it ended.
import { afterAll, describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { detect, MECHANISMS, type Mechanism } from "@/lib/agent/supervisor/container";
import { Supervisor } from "@/lib/agent/supervisor/supervisor";
import { environmentMeaning } from "@/lib/control/evidence/environment";
import { readCmdline, readStat } from "@/lib/agent/supervisor/proc";
import { alive, cleanup, size, tempDir, TEST_RUN_PREFIX, treeScript, until, writesFile } from "./helpers";

const sups: Supervisor[] = [];
const dirs: string[] = [];
afterAll(() => cleanup(sups, dirs), 60_000);

function usable(m: Mechanism): boolean {
  try {
    return detect(m).mechanism === m;
  } catch {
    return false;
  }
}

async function start(m: Mechanism, script: string, dir: string): Promise<Supervisor> {
  const sup = await Supervisor.start(["sh", "-c", script], {
    runId: `${TEST_RUN_PREFIX}_${m}`,
    stateDir: dir,
    mechanism: m,
    stdio: "ignore",
    trackMs: 20,
  });
  sups.push(sup);
  return sup;
}

it("detects the strongest mechanism this machine offers, and says why it skipped the others", () => {
  const d = detect();
  expect(MECHANISMS).toContain(d.mechanism);
  for (const s of d.skipped) expect(s.why).toMatch(/\w/);
});

describe.each(MECHANISMS)("%s", (m) => {
  it.runIf(usable(m))("pause freezes every member, resume thaws, kill empties the tree with evidence", async () => {
    const dir = tempDir(m);
    dirs.push(dir);
    const sup = await start(m, treeScript(dir), dir);
    // sh, sleep 600, sleep 601 (daemon), setsid sleep 602, the TERM-ignorer (+ its sleeps), the writer (+ its sleeps)
    const running = () => sup.container.members().map((s) => readCmdline(s.pid));
    // The double-forked daemon (sleep 601) and the setsid child (sleep 602) are members.
    await until(
      () => ["sleep 600", "sleep 601", "sleep 602"].every((c) => running().includes(c)) && size(writesFile(dir)) > 0,
      5000,
      "the tree",
    );
    const cmdlines = () => sup.container.members().map((s) => s.pid);

    const paused = await sup.pause();
    expect(paused.mechanism).toBe(m);
    const states = cmdlines().map((pid) => readStat(pid)?.state);
    if (m === "pidns" || m === "pgroup") expect(states.every((s) => s === "T" || s === "t")).toBe(true);
    else expect(sup.frozen()).toBe(true);
    const before = size(writesFile(dir));
    await new Promise((r) => setTimeout(r, 300));
    expect(size(writesFile(dir)), "no write while paused").toBe(before);

    await sup.resume();
    await until(() => size(writesFile(dir)) > before, 3000, "writes after resume");

    const pids = cmdlines();
    const ev = await sup.kill(300);
    expect(pids.filter(alive)).toEqual([]);
    expect(ev.mechanism).toBe(m);
    expect(ev.weakest).toBe(m === "pgroup");
    expect(ev.survivors).toEqual([]);
    expect(ev.emptyAt).not.toBeNull();
    expect(environmentMeaning(ev)).toBe("process_terminated");
    const byCmd = (re: RegExp) => ev.processes.filter((p) => re.test(p.cmdline));
    for (const re of [/^sleep 600$/, /^sleep 601$/, /^sleep 602$/]) {
      expect(byCmd(re), String(re)).toHaveLength(1);
      expect(byCmd(re)[0]!.ended).toMatch(/^after_sig(term|kill)$/);
    }
    // The TERM-ignorer outlived the grace: SIGKILL ended it.
    expect(byCmd(/trap "" TERM/).map((p) => p.ended)).toContain("after_sigkill");
    for (const p of ev.processes) expect(p.endedAt).not.toBeNull();
  });

  it.runIf(usable(m))("200 processes: all members, all ended", async () => {
    const dir = tempDir(`${m}-200`);
    dirs.push(dir);
    const sup = await start(m, "for i in $(seq 200); do sleep 600 & done; wait", dir);
    // Until each fork has exec'd (a fork shows its parent's command line before that).
    await until(
      () => sup.liveCount() >= 201 && sup.container.members().filter((s) => readCmdline(s.pid) === "sleep 600").length === 200,
      10_000,
      "200 sleeps",
    );
    const ev = await sup.kill(0);
    expect(ev.processes.filter((p) => p.cmdline === "sleep 600")).toHaveLength(200);
    expect(ev.survivors).toEqual([]);
    expect(environmentMeaning(ev)).toBe("process_terminated");
  });
});

it("a command that cannot start leaves no container behind", async () => {
  const dir = tempDir("nostart");
  dirs.push(dir);
  const m = detect().mechanism;
  if (m === "cgroup2" || m === "cgroup1") {
    // The wrapper shell runs; the command it execs does not exist: it exits 127 and the tree is empty.
    const sup = await start(m, "exec /nonexistent/command", dir);
    expect((await sup.exited).code).toBe(127);
    expect((await sup.finish()).left).toBe(0);
  } else {
    await expect(
      Supervisor.start(["/nonexistent/command"], { runId: `${TEST_RUN_PREFIX}_x`, stateDir: dir, mechanism: m, stdio: "ignore" }),
    ).rejects.toThrow();
  }
});

it("a member that execs after it was first seen: the saved record names what it became", async () => {
  const m = detect().mechanism;
  const dir = tempDir(`exec-${m}`);
  dirs.push(dir);
  // The child shell is seen first as itself; then it execs into the sleep under the same pid.
  const sup = await start(m, "sh -c 'sleep 0.5; exec sleep 604' & wait", dir);
  const saved = () =>
    Object.values((JSON.parse(readFileSync(sup.stateFile, "utf8")) as { processes: Record<string, { cmdline: string }> }).processes).map(
      (p) => p.cmdline,
    );
  await until(() => saved().some((c) => c.startsWith("sh -c sleep 0.5")), 5000, "the shell's first record");
  await until(() => saved().includes("sleep 604"), 5000, "the record after the exec");
  const ev = await sup.kill(100);
  expect(ev.processes.map((p) => p.cmdline)).toContain("sleep 604");
});
