// The supervisor of `quiesce exec` (docs/environment.md): starts a command in a container
// of its own, keeps a record of every process seen in it, freezes and thaws it, and empties it on a kill
// — SIGTERM to every member, a grace period, SIGKILL to what is left until the container reads empty —
// then returns the evidence (lib/control/evidence/environment.ts). Its state file lets a new supervisor
// (`--reattach`) find a tree the first one left behind when it died.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  containerName,
  createContainer,
  detect,
  MARKER_ENV,
  openContainer,
  type Container,
  type ContainerHandle,
  type Detected,
  type Mechanism,
} from "./container";
import { readCmdline } from "./proc";
import { startWatchdog, type Watchdog } from "./watchdog";
import { sleep } from "../../platform/wait";
import type { EnvironmentEvidence, ProcessEnd, ProcessRecord } from "../../control/evidence/environment";

export interface SupervisorOptions {
  runId: string;
  /** Where state files live (one per container). */
  stateDir: string;
  /** Force a mechanism (tests, `--mechanism`); default: the strongest that works here. */
  mechanism?: Mechanism;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  stdio?: "inherit" | "ignore" | "pipe";
  /** How often membership is read while running, for the record of processes seen (default 100 ms). */
  trackMs?: number;
  /** Extra fields kept in the state file (the lease, the control plane) for reattach. */
  meta?: Record<string, unknown>;
}

interface State {
  runId: string;
  handle: ContainerHandle;
  supervisorPid: number;
  startedAt: string;
  meta: Record<string, unknown>;
  /** key → record */
  processes: Record<string, ProcessRecord>;
  stop?: { startedAt: string; phase: Phase; graceMs: number };
  reportedAt?: string;
}

type Phase = "running" | "sigterm" | "sigkill";

export interface PauseResult {
  frozenAt: string;
  members: number;
  mechanism: Mechanism;
}

const nowIso = () => new Date().toISOString();

export class Supervisor {
  readonly child: ChildProcess | null;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private readonly records = new Map<string, ProcessRecord>();
  private phase: Phase = "running";
  private tracker: NodeJS.Timeout | null = null;
  private watchdog: Watchdog | null = null;
  private stopStartedAt: string | null = null;
  private graceMs = 0;
  private rootExit: { code: number | null; signal: NodeJS.Signals | null } | null = null;

  private constructor(
    readonly container: Container,
    readonly stateFile: string,
    private readonly state: State,
    child: ChildProcess | null,
    readonly reattached: boolean,
  ) {
    this.child = child;
    for (const [k, r] of Object.entries(state.processes)) this.records.set(k, r);
    this.exited = child
      ? new Promise((resolve) =>
          child.once("exit", (code, signal) => {
            this.rootExit = { code, signal };
            resolve({ code, signal });
          }),
        )
      : Promise.resolve({ code: null, signal: null });
  }

  get mechanism(): Mechanism {
    return this.container.handle.mechanism;
  }

  /** Starts `argv` inside a new container. Throws (nothing left running) when the container cannot be made. */
  static async start(argv: string[], opts: SupervisorOptions, detected?: Detected): Promise<Supervisor> {
    if (argv.length === 0) throw new Error("no command to run");
    const d = detected ?? detect(opts.mechanism);
    const name = containerName(opts.runId);
    const container = createContainer(d, name);
    mkdirSync(opts.stateDir, { recursive: true });
    const stateFile = join(opts.stateDir, `${name}.json`);
    const w = container.wrap(argv);
    const child = spawn(w.file, w.args, {
      detached: w.detached,
      cwd: opts.cwd,
      stdio: opts.stdio ?? "inherit",
      env: { ...(opts.env ?? process.env), [MARKER_ENV]: name },
    });
    const spawned = await new Promise<Error | null>((resolve) => {
      child.once("spawn", () => resolve(null));
      child.once("error", (err) => resolve(err));
    });
    if (spawned) {
      container.destroy();
      throw spawned;
    }
    container.started(child.pid!);
    const state: State = {
      runId: opts.runId,
      handle: container.handle,
      supervisorPid: process.pid,
      startedAt: nowIso(),
      meta: opts.meta ?? {},
      processes: {},
    };
    const sup = new Supervisor(container, stateFile, state, child, false);
    sup.refresh();
    sup.save();
    if (d.mechanism === "pidns" || d.mechanism === "pgroup") sup.watchdog = startWatchdog(stateFile);
    sup.track(opts.trackMs ?? 100);
    return sup;
  }

  /** Containers a dead supervisor left for this run (state files not yet reported). */
  static findLeft(runId: string, stateDir: string): string[] {
    let names: string[] = [];
    try {
      names = readdirSync(stateDir);
    } catch {
      return [];
    }
    const prefix = runId.replace(/[^A-Za-z0-9_-]/g, "_") + "-";
    return names
      .filter((n) => n.startsWith(prefix) && n.endsWith(".json"))
      .map((n) => join(stateDir, n))
      .filter((f) => {
        try {
          const s = JSON.parse(readFileSync(f, "utf8")) as State;
          return s.runId === runId && !s.reportedAt;
        } catch {
          return false;
        }
      });
  }

  /** Takes over a container from its state file (the supervisor that made it is gone). */
  static reattach(stateFile: string): Supervisor {
    const state = JSON.parse(readFileSync(stateFile, "utf8")) as State;
    const container = openContainer(state.handle);
    const sup = new Supervisor(container, stateFile, state, null, true);
    // What the first supervisor's watchdog killed after it died.
    try {
      const wd = JSON.parse(readFileSync(`${stateFile}.watchdog`, "utf8")) as { killed: Record<string, { at: string }> };
      for (const [k, r] of sup.records)
        if (!r.endedAt && wd.killed[k]) Object.assign(r, { endedAt: wd.killed[k].at, ended: "after_sigkill" });
    } catch {
      /* no watchdog ran (cgroup containers stay put) */
    }
    if (state.stop) {
      sup.stopStartedAt = state.stop.startedAt;
      sup.phase = state.stop.phase;
    }
    sup.refresh();
    return sup;
  }

  get meta(): Record<string, unknown> {
    return this.state.meta;
  }
  get runId(): string {
    return this.state.runId;
  }

  /** Live members now (and updates the record). */
  refresh(): number {
    const live = this.container.members();
    const seen = new Set<string>();
    let changed = false;
    for (const s of live) {
      seen.add(s.key);
      const known = this.records.get(s.key);
      // A fork shows its parent's command line until it execs: keep the latest one read, and save it,
      // since whoever reads the state after the process is gone has only the saved one.
      // (an exiting process has none left, and reads as "[comm]": keep what was read before).
      if (known) {
        const c = readCmdline(s.pid);
        if (c && !c.startsWith("[") && c !== known.cmdline) {
          known.cmdline = c;
          changed = true;
        }
      } else {
        this.records.set(s.key, { pid: s.pid, cmdline: readCmdline(s.pid), firstSeenAt: nowIso(), endedAt: null, ended: "not_ended" });
        changed = true;
      }
    }
    const at = nowIso();
    for (const [k, r] of this.records)
      if (!r.endedAt && !seen.has(k)) {
        r.endedAt = at;
        r.ended = this.endFor();
        if (this.child && this.child.pid === r.pid && this.rootExit)
          Object.assign(r, { exitCode: this.rootExit.code, signal: this.rootExit.signal });
      }
    if (changed) this.save();
    return live.length;
  }

  private endFor(): ProcessEnd {
    return this.phase === "running" ? "exited" : this.phase === "sigterm" ? "after_sigterm" : "after_sigkill";
  }

  private track(ms: number): void {
    this.tracker = setInterval(() => {
      try {
        this.refresh();
      } catch {
        /* a racing exit; the next tick reads again */
      }
    }, ms);
    this.tracker.unref();
  }

  private save(): void {
    this.state.processes = Object.fromEntries(this.records);
    this.state.handle = this.container.handle;
    if (this.stopStartedAt) this.state.stop = { startedAt: this.stopStartedAt, phase: this.phase, graceMs: this.graceMs };
    const tmp = `${this.stateFile}.${process.pid}.tmp`;
    writeFileSync(tmp, JSON.stringify(this.state));
    renameSync(tmp, this.stateFile);
  }

  /** Freezes the whole tree and waits until the mechanism reports it frozen. */
  async pause(timeoutMs = 5000): Promise<PauseResult> {
    this.refresh();
    this.container.freeze();
    const until = Date.now() + timeoutMs;
    while (!this.container.frozen()) {
      if (Date.now() > until) throw new Error(`the container did not freeze within ${timeoutMs} ms`);
      this.container.freeze();
      await sleep(5);
    }
    return { frozenAt: nowIso(), members: this.refresh(), mechanism: this.mechanism };
  }

  async resume(): Promise<void> {
    this.container.thaw();
    await sleep(0);
  }

  /**
   * Empties the container: SIGTERM to every member (and to every process that appears during the
   * grace), then SIGKILL until it reads empty or `giveUpMs` passes; returns the evidence.
   */
  async kill(graceMs: number, giveUpMs = 10_000): Promise<EnvironmentEvidence> {
    if (this.tracker) clearInterval(this.tracker);
    this.graceMs = graceMs;
    this.stopStartedAt ??= nowIso();
    let emptyAt: string | null = null;
    const empty = () => {
      if (this.refresh() === 0) {
        emptyAt = nowIso();
        return true;
      }
      return false;
    };
    if (this.phase === "running") {
      this.phase = "sigterm";
      this.save();
      if (!empty()) {
        // A frozen or stopped member only handles SIGTERM once it runs again.
        this.container.signalAll("SIGTERM");
        this.container.thaw();
        this.container.signalAll("SIGCONT");
        const until = Date.now() + graceMs;
        while (Date.now() < until && !empty()) {
          this.container.signalAll("SIGTERM");
          await sleep(Math.min(20, Math.max(1, until - Date.now())));
        }
      }
    }
    if (!emptyAt && !empty()) {
      this.phase = "sigkill";
      this.save();
      const until = Date.now() + giveUpMs;
      while (Date.now() < until) {
        this.container.killAll();
        await sleep(10);
        if (empty()) break;
      }
    }
    if (this.child && !this.rootExit) await Promise.race([this.exited, sleep(1000)]);
    this.refresh();
    const survivors = [...this.records.values()].filter((r) => !r.endedAt).map((r) => r.pid);
    this.save();
    if (survivors.length === 0) {
      this.watchdog?.disarm();
      this.container.destroy();
    }
    return {
      kind: "environment",
      mechanism: this.mechanism,
      weakest: this.mechanism === "pgroup",
      container: this.container.handle.name,
      graceMs,
      stopStartedAt: this.stopStartedAt,
      emptyAt: survivors.length === 0 ? emptyAt : null,
      processes: [...this.records.values()],
      survivors,
      reattached: this.reattached,
    };
  }

  /** The evidence was reported: a later reattach must not report it again; the state file goes. */
  markReported(): void {
    this.state.reportedAt = nowIso();
    this.save();
    for (const f of [this.stateFile, `${this.stateFile}.watchdog`]) rmSync(f, { force: true });
  }

  /** The command ended on its own and nothing is left: drop the container and the state file. */
  async finish(): Promise<{ left: number }> {
    if (this.tracker) clearInterval(this.tracker);
    const left = this.refresh();
    if (left === 0) {
      this.watchdog?.disarm();
      this.container.destroy();
      for (const f of [this.stateFile, `${this.stateFile}.watchdog`]) rmSync(f, { force: true });
    }
    return { left };
  }

  /** Stop tracking without touching the tree (tests; a supervisor that hands the tree to reattach). */
  detach(): void {
    if (this.tracker) clearInterval(this.tracker);
  }

  liveCount(): number {
    return this.refresh();
  }

  frozen(): boolean {
    return this.container.frozen();
  }
}
