// The supervisor's own death must not free the tree (docs/environment.md). SIGKILL it in
// the middle of a kill: with a cgroup the tree stays put and a reattached supervisor empties it; with a
// signal-based container the watchdog kills the tree at once. Either way exactly one evidence report.
import { afterAll, describe, expect, it } from "vitest";
import { spawn, type ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";
import { join } from "node:path";
import { readFileSync } from "node:fs";
import { detect, MECHANISMS, openContainer, type Mechanism } from "@/lib/agent/supervisor/container";
import { Supervisor } from "@/lib/agent/supervisor/supervisor";
import { environmentMeaning } from "@/lib/control/evidence/environment";
import { readCmdline } from "@/lib/agent/supervisor/proc";
import { alive, cleanup, tempDir, TEST_RUN_PREFIX, until } from "./helpers";

const sups: Supervisor[] = [];
const dirs: string[] = [];
const children: ChildProcess[] = [];
afterAll(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
  // A fixture killed here leaves its tree to its watchdog or its cgroup: reattach and empty what is left.
  for (const d of dirs)
    for (const f of Supervisor.findLeft(`${TEST_RUN_PREFIX}_re_${d.split("reattach-")[1]?.split("-")[0]}`, d))
      sups.push(Supervisor.reattach(f));
  await cleanup(sups, dirs);
}, 60_000);

function usable(m: Mechanism): boolean {
  try {
    return detect(m).mechanism === m;
  } catch {
    return false;
  }
}

const SCRIPT = [
  "sleep 600 &",
  "(sh -c 'sleep 601 & exit 0' &)",
  "setsid sleep 602 &",
  `sh -c 'trap "" TERM; while :; do sleep 0.05; done' &`,
  "wait",
].join("\n");

describe.each(MECHANISMS)("%s", (m) => {
  it.runIf(usable(m))("SIGKILL of the supervisor mid-kill, then reattach: tree empty, one evidence report", async () => {
    const dir = tempDir(`reattach-${m}`);
    dirs.push(dir);
    const runId = `${TEST_RUN_PREFIX}_re_${m}`;
    const child = spawn(process.execPath, ["--import", "tsx", join(import.meta.dirname, "fixture-supervisor.ts"), m, dir, runId, SCRIPT], {
      stdio: ["pipe", "pipe", "inherit"],
    });
    children.push(child);
    const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
    const ready = (await lines.next()).value as string;
    expect(ready).toMatch(/^ready /);
    const stateFile = ready.slice("ready ".length);
    // Read-only look at the tree the fixture's supervisor holds.
    const tree = () => openContainer(JSON.parse(readFileSync(stateFile, "utf8")).handle).members();
    await until(
      () => ["sleep 600", "sleep 601", "sleep 602"].every((c) => tree().some((p) => readCmdline(p.pid) === c)),
      10_000,
      "the tree",
    );
    const pids = tree().map((p) => p.pid);
    child.stdin!.write("kill\n");
    expect((await lines.next()).value).toBe("killing");
    await new Promise((r) => setTimeout(r, 200)); // inside the grace: the TERM-ignorer is still there
    child.kill("SIGKILL");
    await new Promise((r) => child.once("exit", r));

    if (m === "cgroup2" || m === "cgroup1") {
      // The tree stays in its group: the TERM-ignorer is still alive.
      expect(pids.some(alive)).toBe(true);
    } else {
      // The watchdog saw the pipe close and killed everything.
      await until(() => pids.every((p) => !alive(p)), 10_000, "the watchdog to empty the tree");
    }

    const left = Supervisor.findLeft(runId, dir);
    expect(left).toHaveLength(1);
    const sup = Supervisor.reattach(left[0]!);
    sups.push(sup);
    const ev = await sup.kill(100);
    expect(ev.reattached).toBe(true);
    expect(ev.survivors).toEqual([]);
    expect(environmentMeaning(ev)).toBe("process_terminated");
    expect(pids.filter(alive)).toEqual([]);
    for (const c of ["sleep 600", "sleep 601", "sleep 602"]) expect(ev.processes.find((p) => p.cmdline === c)?.endedAt).toBeTruthy();
    sup.markReported();
    // Reported once: nothing is left for another reattach.
    expect(Supervisor.findLeft(runId, dir)).toEqual([]);
  });
});
