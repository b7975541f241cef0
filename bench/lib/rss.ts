// Resident memory of a process tree, from Linux /proc: every descendant of a pid, with its RSS, its
// command line and whether it is a Node process (its executable is this Node's).
import { readdirSync, readFileSync, readlinkSync } from "node:fs";

export interface ProcInfo {
  pid: number;
  ppid: number;
  rssMb: number;
  node: boolean;
  cmdline: string[];
}

function read(pid: number): ProcInfo | null {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const ppid = Number(/PPid:\s+(\d+)/.exec(status)?.[1]);
    const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
    const cmdline = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").filter(Boolean);
    let exe = "";
    try {
      exe = readlinkSync(`/proc/${pid}/exe`);
    } catch {
      /* another user's process: not ours to read */
    }
    return { pid, ppid, rssMb: kb / 1024, node: exe === process.execPath, cmdline };
  } catch {
    return null;
  }
}

/** The process `root` and all its descendants (children of children included), found in /proc. */
export function processTree(root: number): ProcInfo[] {
  const all = readdirSync("/proc")
    .filter((n) => /^\d+$/.test(n))
    .map((n) => read(Number(n)))
    .filter((p): p is ProcInfo => p !== null);
  const byParent = new Map<number, ProcInfo[]>();
  for (const p of all) byParent.set(p.ppid, [...(byParent.get(p.ppid) ?? []), p]);
  const out: ProcInfo[] = [];
  const self = all.find((p) => p.pid === root);
  const queue = self ? [self] : [];
  while (queue.length) {
    const p = queue.shift()!;
    out.push(p);
    queue.push(...(byParent.get(p.pid) ?? []));
  }
  return out;
}

/** RSS of one process in MB, null when it is gone. */
export function rssOf(pid: number): number | null {
  return read(pid)?.rssMb ?? null;
}

/** A readable name for a process of the `npm start` stack, from its command line. */
export function stackName(p: ProcInfo): string {
  const c = p.cmdline.join(" ");
  if (/next-server|next[\\/]dist[\\/]bin[\\/]next/.test(c)) return "web (next start)";
  const cli = /quiesce\.(?:mjs|ts)\s+(\S+)(.*)$/.exec(c);
  if (cli?.[1] === "start") return "supervisor (quiesce start)";
  if (cli?.[1] === "together") {
    const members = cli[2]!.split(" + ").map((m) => m.trim().split(" ")[0]);
    return `workers (${members.join(" + ")})`;
  }
  if (cli) return cli[1]!;
  if (/(^|[\\/ ])npm(-cli\.js)?( |$)/.test(c)) return "npm";
  return p.cmdline[0]?.split("/").pop() ?? String(p.pid);
}
