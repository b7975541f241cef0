// Child processes of an eval run: each a real OS process with its own log file under the run's log
// folder, JSON lines on stdout parsed as they come, and a stop that escalates to SIGKILL. Every
// process started here is tracked, so a crashed or interrupted eval run leaves nothing behind.
import { spawn, type ChildProcess } from "node:child_process";
import { createWriteStream, type WriteStream } from "node:fs";
import { createInterface } from "node:readline";
import path from "node:path";
import { waitFor } from "../../lib/platform/wait";

export const ROOT = path.resolve(import.meta.dirname, "../..");

export type Line = Record<string, unknown>;

export interface Proc {
  name: string;
  child: ChildProcess;
  pid: number;
  lines: Line[];
  /** Resolves with the first line (seen or future) matching `pred`; rejects when the process exits first. */
  waitForLine(pred: (l: Line) => boolean, timeoutMs?: number, what?: string): Promise<Line>;
  onLine(fn: (l: Line) => void): void;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  alive(): boolean;
  stop(signal?: NodeJS.Signals, graceMs?: number): Promise<void>;
  write(line: Line): void;
  tail(n?: number): string;
}

const live = new Set<Proc>();

/** SIGKILL everything still running (exit hooks, interrupted runs). */
export function killAll(): void {
  for (const p of live)
    if (p.alive()) {
      try {
        p.child.kill("SIGKILL");
      } catch {
        /* gone */
      }
    }
}

export interface SpawnOptions {
  env: Record<string, string | undefined>;
  logDir: string;
  stdin?: boolean;
}

export function spawnProc(name: string, command: string, args: string[], o: SpawnOptions): Proc {
  const child = spawn(command, args, {
    cwd: ROOT,
    env: { ...process.env, ...o.env } as NodeJS.ProcessEnv,
    stdio: [o.stdin ? "pipe" : "ignore", "pipe", "pipe"],
  });
  const log: WriteStream = createWriteStream(path.join(o.logDir, `${name}.log`), { flags: "a" });
  const lines: Line[] = [];
  const listeners: ((l: Line) => void)[] = [];
  const recent: string[] = [];
  const keep = (s: string) => {
    recent.push(s);
    if (recent.length > 200) recent.shift();
  };
  createInterface({ input: child.stdout! }).on("line", (text) => {
    log.write(`${text}\n`);
    keep(text);
    if (!text.startsWith("{")) return;
    let l: Line;
    try {
      l = JSON.parse(text) as Line;
    } catch {
      return;
    }
    lines.push(l);
    for (const f of [...listeners]) f(l);
  });
  createInterface({ input: child.stderr! }).on("line", (text) => {
    log.write(`[stderr] ${text}\n`);
    keep(`[stderr] ${text}`);
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once("error", (e) => {
      keep(`[spawn error] ${e.message}`);
      resolve({ code: null, signal: null });
    });
    child.once("exit", (code, signal) => {
      log.write(`[exit] code=${code} signal=${signal}\n`);
      resolve({ code, signal });
    });
  });
  const alive = () => child.exitCode === null && child.signalCode === null;
  const p: Proc = {
    name,
    child,
    pid: child.pid ?? -1,
    lines,
    exited,
    alive,
    onLine: (fn) => {
      listeners.push(fn);
    },
    waitForLine(pred, timeoutMs = 60_000, what = "a line") {
      const seen = lines.find(pred);
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        const done = (err: Error | null, l?: Line) => {
          clearTimeout(t);
          const i = listeners.indexOf(on);
          if (i >= 0) listeners.splice(i, 1);
          if (err) reject(err);
          else resolve(l!);
        };
        const on = (l: Line) => {
          if (pred(l)) done(null, l);
        };
        const t = setTimeout(() => done(new Error(`${name}: no ${what} within ${timeoutMs} ms\n${p.tail(20)}`)), timeoutMs);
        listeners.push(on);
        void exited.then(({ code, signal }) => done(new Error(`${name} exited (${code ?? signal}) before ${what}\n${p.tail(30)}`)));
      });
    },
    async stop(signal = "SIGTERM", graceMs = 15_000) {
      if (!alive()) return;
      child.kill(signal);
      const t = setTimeout(() => {
        if (alive()) child.kill("SIGKILL");
      }, graceMs);
      await exited;
      clearTimeout(t);
      live.delete(p);
    },
    write(line) {
      child.stdin?.write(`${JSON.stringify(line)}\n`);
    },
    tail: (n = 20) => recent.slice(-n).join("\n"),
  };
  void exited.then(() => {
    live.delete(p);
    log.end();
  });
  live.add(p);
  return p;
}

/**
 * A TypeScript entry under tsx with the react-server condition (as `npm run quiesce` runs it), loaded
 * with `node --import tsx` so the process IS the program: a signal reaches it, not a wrapper.
 */
export function spawnTs(name: string, entry: string, args: string[], o: SpawnOptions): Proc {
  return spawnProc(name, process.execPath, ["--conditions=react-server", "--import", "tsx", entry, ...args], o);
}

/** `npm run quiesce -- <args>` as ONE process (no npm wrapper: a signal reaches the command itself). */
export function spawnCli(name: string, args: string[], o: SpawnOptions): Proc {
  return spawnProc(
    name,
    process.execPath,
    ["--conditions=react-server", "--import", "tsx", path.join(ROOT, "bin", "quiesce.ts"), ...args],
    o,
  );
}

export { waitFor as waitUntil };
