// Containers for `quiesce exec` (docs/environment.md): a place a command and every
// descendant stays in, however it detaches, so that pause, resume and kill reach all of it. Four
// mechanisms, strongest first; the weakest one is named as such in the evidence.
//
//   cgroup2  a cgroup v2 group: membership is the kernel's, freeze is cgroup.freeze, kill is cgroup.kill
//   cgroup1  cgroup v1 freezer + pids groups: membership is the kernel's, freeze is freezer.state
//   pidns    a PID namespace (unshare --pid --fork --kill-child): membership is the namespace; killing its
//            init kills everything in it; freeze is SIGSTOP to every member
//   pgroup   a new session/process group, plus a /proc scan for descendants (ancestry, session, group and an
//            inherited environment marker): a process that leaves the session, is orphaned and clears its
//            environment escapes — the weakest mechanism
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { hasEnvMarker, isAlive, listPids, pidNamespace, readStat, signal, type ProcStat } from "./proc";

export const MECHANISMS = ["cgroup2", "cgroup1", "pidns", "pgroup"] as const;
export type Mechanism = (typeof MECHANISMS)[number];

/** The environment variable every process of a container inherits (the scan's marker, and reattach's). */
export const MARKER_ENV = "QUIESCE_EXEC_CONTAINER";
/** The folder, inside each cgroup hierarchy, that holds the containers. */
export const CGROUP_BASE = "quiesce-exec";

/** What it takes to find a container again (written to the supervisor's state file for reattach). */
export interface ContainerHandle {
  mechanism: Mechanism;
  name: string;
  /** cgroup folders (cgroup2: one; cgroup1: freezer then pids). */
  cgroupDirs?: string[];
  /** The spawned process (unshare for pidns, the command itself otherwise). */
  rootPid?: number;
  rootKey?: string;
  /** pgroup: the session and group the command was started in. */
  sid?: number;
  pgid?: number;
  /** pidns: the namespace's /proc/<pid>/ns/pid link and its init's pid (as seen from here). */
  pidns?: string;
  nsInitPid?: number;
  /** Clock ticks since boot when the container was made: nothing older is a member. */
  sinceTicks?: number;
}

export interface Detected {
  mechanism: Mechanism;
  /** Why the stronger ones were not used. */
  skipped: { mechanism: Mechanism; why: string }[];
  cgroup2Mount?: string;
  cgroup1Mounts?: { freezer: string; pids: string };
  setpriv: boolean;
}

interface Mount {
  dir: string;
  fstype: string;
  options: string[];
}

function mounts(): Mount[] {
  try {
    return readFileSync("/proc/self/mountinfo", "utf8")
      .split("\n")
      .filter(Boolean)
      .map((line) => {
        const [left, right = ""] = line.split(" - ");
        const l = left!.split(" ");
        const r = right.split(" ");
        return { dir: l[4]!, fstype: r[0]!, options: [...(l[5] ?? "").split(","), ...(r[2] ?? "").split(",")] };
      });
  } catch {
    return [];
  }
}

function tryMakeGroup(dir: string, needs: string[]): string | null {
  const probe = join(dir, CGROUP_BASE, `probe-${process.pid}-${Date.now()}`);
  try {
    mkdirSync(probe, { recursive: true });
    const missing = needs.filter((f) => !existsSync(join(probe, f)));
    rmdirSync(probe);
    return missing.length ? `no ${missing.join(", ")} in a new group under ${dir}` : null;
  } catch (err) {
    try {
      rmdirSync(probe);
    } catch {
      /* not made */
    }
    return `cannot make a group under ${dir}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`;
  }
}

function commandWorks(file: string, args: string[]): boolean {
  try {
    return spawnSync(file, args, { stdio: "ignore", timeout: 5000 }).status === 0;
  } catch {
    return false;
  }
}

/** Which mechanisms this machine offers, strongest first; `force` picks one (tests, `--mechanism`), failing if unusable. */
export function detect(force?: Mechanism): Detected {
  const skipped: Detected["skipped"] = [];
  const ms = mounts();
  const setpriv = commandWorks("setpriv", ["--pdeathsig", "KILL", "true"]);
  const order = force ? [force] : MECHANISMS;
  for (const m of order) {
    if (m === "cgroup2") {
      const mount = ms.find((x) => x.fstype === "cgroup2" && x.options.includes("rw"));
      if (!mount) skipped.push({ mechanism: m, why: "no writable cgroup2 mount" });
      else {
        const why = tryMakeGroup(mount.dir, ["cgroup.freeze", "cgroup.kill", "cgroup.procs"]);
        if (!why) return { mechanism: m, skipped, cgroup2Mount: mount.dir, setpriv };
        skipped.push({ mechanism: m, why });
      }
    } else if (m === "cgroup1") {
      const freezer = ms.find((x) => x.fstype === "cgroup" && x.options.includes("freezer") && x.options.includes("rw"));
      const pids = ms.find((x) => x.fstype === "cgroup" && x.options.includes("pids") && x.options.includes("rw"));
      if (!freezer || !pids) skipped.push({ mechanism: m, why: "no writable cgroup v1 freezer and pids hierarchies" });
      else {
        const why =
          tryMakeGroup(freezer.dir, ["freezer.state", "cgroup.procs"]) ?? tryMakeGroup(pids.dir, ["pids.current", "cgroup.procs"]);
        if (!why) return { mechanism: m, skipped, cgroup1Mounts: { freezer: freezer.dir, pids: pids.dir }, setpriv };
        skipped.push({ mechanism: m, why });
      }
    } else if (m === "pidns") {
      if (commandWorks("unshare", ["--pid", "--fork", "--kill-child", "true"])) return { mechanism: m, skipped, setpriv };
      skipped.push({ mechanism: m, why: "unshare --pid --fork is not permitted here" });
    } else {
      return { mechanism: "pgroup", skipped, setpriv };
    }
  }
  throw new Error(`container mechanism ${force} is not usable here: ${skipped.map((s) => s.why).join("; ")}`);
}

export type FreezeState = "thawed" | "freezing" | "frozen";

/** A container; every method is synchronous /proc and cgroupfs work (microseconds to milliseconds). */
export interface Container {
  readonly handle: ContainerHandle;
  /** How to spawn `argv` so that it starts inside the container (the command never runs outside it). */
  wrap(argv: string[]): { file: string; args: string[]; detached: boolean };
  /** The spawned process is running: learn what the mechanism needs from it. */
  started(pid: number): void;
  /** Every live member now. */
  members(): ProcStat[];
  signalAll(sig: NodeJS.Signals): void;
  /** SIGKILL to everything inside, by the strongest means the mechanism has (forks during it included). */
  killAll(): void;
  freeze(): void;
  thaw(): void;
  /** Whether every member is frozen (cgroup) or stopped (T). */
  frozen(): boolean;
  /** Remove what the container left on the machine (cgroup folders). Only when empty. */
  destroy(): void;
}

export function containerName(runId: string): string {
  return `${runId.replace(/[^A-Za-z0-9_-]/g, "_")}-${process.pid}-${Date.now().toString(36)}`;
}

export function createContainer(d: Detected, name: string): Container {
  const handle: ContainerHandle = { mechanism: d.mechanism, name, sinceTicks: readStat(process.pid)?.startTicks };
  if (d.mechanism === "cgroup2") {
    const dir = join(d.cgroup2Mount!, CGROUP_BASE, name);
    mkdirSync(dir, { recursive: true });
    handle.cgroupDirs = [dir];
  } else if (d.mechanism === "cgroup1") {
    const dirs = [join(d.cgroup1Mounts!.freezer, CGROUP_BASE, name), join(d.cgroup1Mounts!.pids, CGROUP_BASE, name)];
    for (const dir of dirs) mkdirSync(dir, { recursive: true });
    handle.cgroupDirs = dirs;
  }
  return openContainer(handle, { setpriv: d.setpriv });
}

/** A container from its handle: the one just made, or one a dead supervisor left (reattach). */
export function openContainer(handle: ContainerHandle, opts: { setpriv?: boolean } = {}): Container {
  switch (handle.mechanism) {
    case "cgroup2":
    case "cgroup1":
      return new CgroupContainer(handle);
    case "pidns":
      return new PidnsContainer(handle, opts.setpriv ?? false);
    case "pgroup":
      return new PgroupContainer(handle);
  }
}

function readPids(file: string): number[] {
  try {
    return readFileSync(file, "utf8")
      .split("\n")
      .filter(Boolean)
      .map(Number)
      .filter((n) => n > 0);
  } catch {
    return [];
  }
}

function aliveStats(pids: Iterable<number>): ProcStat[] {
  const out: ProcStat[] = [];
  for (const pid of pids) {
    const s = readStat(pid);
    if (isAlive(s)) out.push(s);
  }
  return out;
}

const shq = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

class CgroupContainer implements Container {
  private readonly v2: boolean;
  constructor(readonly handle: ContainerHandle) {
    this.v2 = handle.mechanism === "cgroup2";
  }
  wrap(argv: string[]) {
    // The shell joins the group(s) itself, then execs the command: nothing runs outside.
    const joins = this.handle.cgroupDirs!.map((d) => `echo $$ > ${shq(join(d, "cgroup.procs"))}`).join(" && ");
    return { file: "/bin/sh", args: ["-c", `${joins} && exec "$@"`, "quiesce-exec", ...argv], detached: true };
  }
  started(pid: number): void {
    this.handle.rootPid = pid;
    this.handle.rootKey = readStat(pid)?.key;
  }
  private get procs(): string {
    return join(this.handle.cgroupDirs![0]!, "cgroup.procs");
  }
  members(): ProcStat[] {
    return aliveStats(readPids(this.procs));
  }
  signalAll(sig: NodeJS.Signals): void {
    for (const pid of readPids(this.procs)) signal(pid, sig);
  }
  killAll(): void {
    const dir = this.handle.cgroupDirs![0]!;
    if (this.v2) {
      try {
        writeFileSync(join(dir, "cgroup.kill"), "1");
        return;
      } catch {
        /* older kernel: signal each member below */
      }
    }
    // Freeze first so nothing forks between reading the list and signalling it; a frozen task dies once thawed.
    this.freeze();
    for (let i = 0; i < 3; i++) this.signalAll("SIGKILL");
    this.thaw();
  }
  freeze(): void {
    const dir = this.handle.cgroupDirs![0]!;
    if (this.v2) writeFileSync(join(dir, "cgroup.freeze"), "1");
    else writeFileSync(join(dir, "freezer.state"), "FROZEN");
  }
  thaw(): void {
    const dir = this.handle.cgroupDirs![0]!;
    if (this.v2) writeFileSync(join(dir, "cgroup.freeze"), "0");
    else writeFileSync(join(dir, "freezer.state"), "THAWED");
  }
  frozen(): boolean {
    const dir = this.handle.cgroupDirs![0]!;
    try {
      if (this.v2) return /^frozen 1$/m.test(readFileSync(join(dir, "cgroup.events"), "utf8"));
      return readFileSync(join(dir, "freezer.state"), "utf8").trim() === "FROZEN";
    } catch {
      return false;
    }
  }
  destroy(): void {
    for (const dir of this.handle.cgroupDirs ?? []) {
      try {
        rmdirSync(dir);
      } catch {
        /* gone already, or still populated: left for reattach */
      }
    }
  }
}

/** Members by scanning /proc; shared by the two signal-based mechanisms. */
abstract class ScanContainer implements Container {
  protected readonly known = new Set<string>();
  constructor(readonly handle: ContainerHandle) {}
  abstract wrap(argv: string[]): { file: string; args: string[]; detached: boolean };
  abstract started(pid: number): void;
  protected abstract belongs(s: ProcStat, byPid: Map<number, ProcStat>, members: Set<number>): boolean;

  members(): ProcStat[] {
    const since = this.handle.sinceTicks ?? 0;
    const byPid = new Map<number, ProcStat>();
    for (const pid of listPids()) {
      if (pid === process.pid) continue;
      const s = readStat(pid);
      if (isAlive(s) && s.startTicks >= since) byPid.set(pid, s);
    }
    const members = new Set<number>();
    // Known (seen before), or belonging by the mechanism's own rule.
    for (const s of byPid.values()) if (this.known.has(s.key) || this.belongs(s, byPid, members)) members.add(s.pid);
    // Then descendants of members, to a fixed point (a child listed before its parent).
    let grew = true;
    while (grew) {
      grew = false;
      for (const s of byPid.values())
        if (!members.has(s.pid) && members.has(s.ppid)) {
          members.add(s.pid);
          grew = true;
        }
    }
    const out = [...members].map((p) => byPid.get(p)!);
    for (const s of out) this.known.add(s.key);
    return out;
  }
  signalAll(sig: NodeJS.Signals): void {
    for (const s of this.members()) signal(s.pid, sig);
  }
  killAll(): void {
    // Stop everything first so nothing forks between the scan and the kill, then kill what was stopped.
    for (let i = 0; i < 3; i++) this.signalAll("SIGSTOP");
    for (let i = 0; i < 2; i++) this.signalAll("SIGKILL");
  }
  freeze(): void {
    for (let i = 0; i < 3; i++) this.signalAll("SIGSTOP");
  }
  thaw(): void {
    this.signalAll("SIGCONT");
  }
  frozen(): boolean {
    return this.members().every((s) => s.state === "T" || s.state === "t");
  }
  destroy(): void {}
}

class PidnsContainer extends ScanContainer {
  constructor(
    handle: ContainerHandle,
    private readonly setpriv: boolean,
  ) {
    super(handle);
  }
  wrap(argv: string[]) {
    // --kill-child: unshare's death kills the namespace's init, and with it the namespace; setpriv makes the
    // supervisor's death kill unshare (PR_SET_PDEATHSIG, kept across exec).
    const unshare = ["unshare", "--pid", "--fork", "--kill-child", ...argv];
    return this.setpriv
      ? { file: "setpriv", args: ["--pdeathsig", "KILL", ...unshare], detached: true }
      : { file: unshare[0]!, args: unshare.slice(1), detached: true };
  }
  started(pid: number): void {
    this.handle.rootPid = pid;
    this.handle.rootKey = readStat(pid)?.key;
    this.handle.sid = pid;
    // unshare forks the namespace's init right away; learn the namespace from it.
    const own = pidNamespace(process.pid);
    const until = Date.now() + 2000;
    while (Date.now() < until && !this.handle.pidns) {
      for (const s of aliveStats(listPids()))
        if (s.ppid === pid) {
          const ns = pidNamespace(s.pid);
          if (ns && ns !== own) {
            this.handle.pidns = ns;
            this.handle.nsInitPid = s.pid;
          }
        }
    }
  }
  protected belongs(s: ProcStat): boolean {
    return s.key === this.handle.rootKey || (this.handle.pidns !== undefined && pidNamespace(s.pid) === this.handle.pidns);
  }
  killAll(): void {
    // The namespace's init dying takes every process of the namespace with it (the kernel's rule).
    if (this.handle.nsInitPid) signal(this.handle.nsInitPid, "SIGKILL");
    super.killAll();
  }
}

class PgroupContainer extends ScanContainer {
  wrap(argv: string[]) {
    return { file: argv[0]!, args: argv.slice(1), detached: true };
  }
  started(pid: number): void {
    this.handle.rootPid = pid;
    this.handle.rootKey = readStat(pid)?.key;
    this.handle.sid = pid;
    this.handle.pgid = pid;
  }
  protected belongs(s: ProcStat): boolean {
    const h = this.handle;
    return s.key === h.rootKey || s.sid === h.sid || s.pgid === h.pgid || hasEnvMarker(s.pid, `${MARKER_ENV}=${h.name}`);
  }
}
