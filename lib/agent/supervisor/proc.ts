// Reading /proc: the facts a supervisor has about a process (docs/environment.md).
// A process is identified by (pid, start time) so a reused pid is never mistaken for one we saw.
import { readFileSync, readdirSync, readlinkSync } from "node:fs";

export interface ProcStat {
  pid: number;
  ppid: number;
  pgid: number;
  sid: number;
  /** R, S, D, T (stopped), t, Z (zombie: it has ended), X … */
  state: string;
  /** Clock ticks since boot at which the process started. */
  startTicks: number;
  /** Identity that survives pid reuse. */
  key: string;
}

/** /proc/<pid>/stat, or null when the process is gone. The command name may contain spaces and ')'. */
export function readStat(pid: number): ProcStat | null {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return null;
  }
  const close = text.lastIndexOf(")");
  if (close < 0) return null;
  const f = text.slice(close + 2).split(" ");
  // After "pid (comm) ": state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime cutime cstime
  // priority nice num_threads itrealvalue starttime …
  const startTicks = Number(f[19]);
  return {
    pid,
    state: f[0] ?? "?",
    ppid: Number(f[1]),
    pgid: Number(f[2]),
    sid: Number(f[3]),
    startTicks,
    key: `${pid}@${startTicks}`,
  };
}

/** A process that has ended but was not reaped yet counts as ended. */
export function isAlive(s: ProcStat | null): s is ProcStat {
  return s !== null && s.state !== "Z" && s.state !== "X";
}

export function readCmdline(pid: number): string {
  try {
    const raw = readFileSync(`/proc/${pid}/cmdline`, "utf8");
    const s = raw.replace(/\0+$/, "").split("\0").join(" ");
    if (s) return s;
  } catch {
    return "";
  }
  try {
    return `[${readFileSync(`/proc/${pid}/comm`, "utf8").trim()}]`;
  } catch {
    return "";
  }
}

export function listPids(): number[] {
  const out: number[] = [];
  for (const name of readdirSync("/proc")) {
    const n = Number(name);
    if (Number.isInteger(n) && n > 0) out.push(n);
  }
  return out;
}

/** Whether the process's environment holds `marker` (KEY=value), which every descendant inherits unless it clears it. */
export function hasEnvMarker(pid: number, marker: string): boolean {
  try {
    return readFileSync(`/proc/${pid}/environ`, "latin1").split("\0").includes(marker);
  } catch {
    return false;
  }
}

export function pidNamespace(pid: number): string | null {
  try {
    return readlinkSync(`/proc/${pid}/ns/pid`);
  } catch {
    return null;
  }
}

/** Sends a signal; false when the process is already gone (ESRCH). */
export function signal(pid: number, sig: NodeJS.Signals): boolean {
  try {
    process.kill(pid, sig);
    return true;
  } catch {
    return false;
  }
}
