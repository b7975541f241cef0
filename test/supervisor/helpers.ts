// Shared by the supervisor tests: real process trees of every shape that detaches, and cleanup that
// leaves no process, cgroup folder or state file behind.
import { mkdtempSync, readdirSync, rmdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CGROUP_BASE } from "@/lib/agent/supervisor/container";
import { isAlive, readStat } from "@/lib/agent/supervisor/proc";
import type { Supervisor } from "@/lib/agent/supervisor/supervisor";

export const TEST_RUN_PREFIX = "run_suptest";

/** A tree with a background job, a double-forked daemon, a setsid child, a SIGTERM-ignorer and a writer. */
export function treeScript(dir: string): string {
  const out = join(dir, "writes.txt");
  return [
    "sleep 600 &",
    "(sh -c 'sleep 601 & exit 0' &)",
    "setsid sleep 602 &",
    `sh -c 'trap "" TERM; while :; do sleep 0.05; done' &`,
    `sh -c 'while :; do echo x >> ${out}; sleep 0.02; done' &`,
    "wait",
  ].join("\n");
}

export function writesFile(dir: string): string {
  return join(dir, "writes.txt");
}

export function size(file: string): number {
  try {
    return statSync(file).size;
  } catch {
    return 0;
  }
}

export function tempDir(tag: string): string {
  return mkdtempSync(join(tmpdir(), `quiesce-${tag}-`));
}

export async function until(cond: () => boolean, ms = 5000, what = "condition"): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

export function alive(pid: number): boolean {
  return isAlive(readStat(pid));
}

/** Kills whatever a test left and removes every test cgroup folder and state dir. */
export async function cleanup(sups: Supervisor[], dirs: string[]): Promise<void> {
  for (const s of sups) {
    try {
      await s.kill(0, 3000);
    } catch {
      /* already emptied */
    }
  }
  for (const root of ["/sys/fs/cgroup/unified", "/sys/fs/cgroup/freezer", "/sys/fs/cgroup/pids", "/sys/fs/cgroup"]) {
    const base = join(root, CGROUP_BASE);
    let names: string[] = [];
    try {
      names = readdirSync(base);
    } catch {
      continue;
    }
    for (const n of names)
      if (n.startsWith(TEST_RUN_PREFIX))
        try {
          rmdirSync(join(base, n));
        } catch {
          /* still populated: the test that made it failed to empty it, which it reports */
        }
  }
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
}
