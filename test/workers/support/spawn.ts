// Real child processes for the multi-process checks: each runs a TypeScript entry point under tsx
// (with the react-server condition, as `npm run quiesce` does) and speaks JSON lines on stdout.
import { spawn, type ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";
import path from "node:path";

const ROOT = path.resolve(import.meta.dirname, "../../..");
// `node --import tsx` (not the tsx CLI, which runs the script in a grandchild that SIGKILL would orphan).

export interface Child {
  proc: ChildProcess;
  lines: Record<string, unknown>[];
  /** Everything written to stdout so far (for commands that print plain lines). */
  out(): string;
  /** Resolves with the first line (already seen or future) matching `pred`. */
  waitFor(pred: (l: Record<string, unknown>) => boolean, timeoutMs?: number): Promise<Record<string, unknown>>;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
  stderr(): string;
}

/** `npm run quiesce -- <args>` as a child process. */
export function spawnCli(args: string[], env: Record<string, string | undefined>): Child {
  return spawnTsx(path.join(ROOT, "bin/quiesce.ts"), env, args);
}

export function spawnTsx(entry: string, env: Record<string, string | undefined>, args: string[] = []): Child {
  const proc = spawn(process.execPath, ["--conditions=react-server", "--import", "tsx", entry, ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const lines: Record<string, unknown>[] = [];
  const waiters: { pred: (l: Record<string, unknown>) => boolean; resolve: (l: Record<string, unknown>) => void }[] = [];
  let err = "";
  let out = "";
  proc.stderr!.on("data", (d) => {
    err += String(d);
  });
  proc.stdout!.on("data", (d) => {
    out += String(d);
  });
  createInterface({ input: proc.stdout! }).on("line", (text) => {
    let l: Record<string, unknown>;
    try {
      l = JSON.parse(text);
    } catch {
      return;
    }
    lines.push(l);
    for (const w of [...waiters])
      if (w.pred(l)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(l);
      }
  });
  const exited = new Promise<number | null>((r) => proc.on("exit", (code) => r(code)));
  return {
    proc,
    lines,
    out: () => out,
    stderr: () => err,
    waitFor(pred, timeoutMs = 60_000) {
      const seen = lines.find(pred);
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        const t = setTimeout(
          () => reject(new Error(`child ${entry}: no matching line within ${timeoutMs} ms; stderr:\n${err.slice(-2000)}`)),
          timeoutMs,
        );
        waiters.push({
          pred,
          resolve: (l) => {
            clearTimeout(t);
            resolve(l);
          },
        });
        exited.then((code) => {
          clearTimeout(t);
          reject(new Error(`child ${entry} exited (${code}) before a matching line; stderr:\n${err.slice(-2000)}`));
        });
      });
    },
    async stop(signal = "SIGTERM") {
      if (proc.exitCode !== null || proc.signalCode !== null) return proc.exitCode;
      proc.kill(signal);
      const t = setTimeout(() => proc.kill("SIGKILL"), 20_000);
      const code = await exited;
      clearTimeout(t);
      return code;
    },
  };
}
