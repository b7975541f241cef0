// Runs `npm start`'s child processes: each line of their output is prefixed with the child's name,
// an unexpected exit is reported loudly (and never silently restarted), and stopAll() ends them with
// SIGTERM, then SIGKILL after a grace period.
import { spawn, type ChildProcess } from "node:child_process";
import readline from "node:readline";
import type { Readable } from "node:stream";

export interface Supervised {
  name: string;
  child: ChildProcess;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export interface SupervisorOptions {
  /** Where prefixed lines go (stdout for the child's stdout, stderr for its stderr). */
  out?: (line: string) => void;
  err?: (line: string) => void;
  /** Called when a child exits while we are not stopping: a crash. */
  onUnexpectedExit?: (name: string, code: number | null, signal: NodeJS.Signals | null) => void;
  graceMs?: number;
}

const COLORS = [36, 35, 33, 32, 34, 31];

export class Supervisor {
  private readonly children: Supervised[] = [];
  private stopping = false;
  private readonly width = 16;
  constructor(private readonly opts: SupervisorOptions = {}) {}

  get isStopping(): boolean {
    return this.stopping;
  }

  list(): readonly Supervised[] {
    return this.children;
  }

  private prefix(name: string, index: number): string {
    const label = `[${name}]`.padEnd(this.width);
    return process.stdout.isTTY ? `\x1b[${COLORS[index % COLORS.length]}m${label}\x1b[0m ` : `${label} `;
  }

  private pipe(stream: Readable | null, prefix: string, write: (line: string) => void, own = ""): void {
    if (!stream) return;
    readline.createInterface({ input: stream, crlfDelay: Infinity }).on("line", (line) =>
      // Commands that also run on their own tag their lines ("[demo] …"); don't say the name twice.
      write(`${prefix}${own && line.startsWith(own) ? line.slice(own.length) : line}`),
    );
  }

  /** `oneShot`: a task expected to finish (the build); its exit is the caller's to judge, not a crash. */
  spawn(
    name: string,
    command: string,
    args: string[],
    env: Record<string, string | undefined>,
    cwd: string,
    opts: { oneShot?: boolean } = {},
  ): Supervised {
    const child = spawn(command, args, { cwd, env: env as NodeJS.ProcessEnv, stdio: ["ignore", "pipe", "pipe"] });
    const prefix = this.prefix(name, this.children.length);
    this.pipe(child.stdout, prefix, this.opts.out ?? ((l) => process.stdout.write(`${l}\n`)), `[${name}] `);
    this.pipe(child.stderr, prefix, this.opts.err ?? ((l) => process.stderr.write(`${l}\n`)), `[${name}] `);
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
      child.once("error", (e) => {
        (this.opts.err ?? console.error)(`${prefix}failed to start: ${e.message}`);
        resolve({ code: null, signal: null });
      });
      child.once("exit", (code, signal) => resolve({ code, signal }));
    });
    void exited.then(({ code, signal }) => {
      if (!this.stopping && !opts.oneShot) this.opts.onUnexpectedExit?.(name, code, signal);
    });
    const s = { name, child, exited };
    this.children.push(s);
    return s;
  }

  /** SIGTERM to every running child (in reverse start order), SIGKILL to those still alive after graceMs. */
  async stopAll(): Promise<void> {
    this.stopping = true;
    const alive = this.children.filter((c) => c.child.exitCode === null && c.child.signalCode === null).reverse();
    for (const c of alive) c.child.kill("SIGTERM");
    const grace = this.opts.graceMs ?? 10_000;
    await Promise.all(
      alive.map(async (c) => {
        let timer: NodeJS.Timeout | undefined;
        const timedOut = new Promise<"timeout">((r) => {
          timer = setTimeout(() => r("timeout"), grace);
        });
        const result = await Promise.race([c.exited, timedOut]);
        clearTimeout(timer);
        if (result === "timeout") {
          (this.opts.err ?? console.error)(`[${c.name}] did not stop within ${grace} ms; killing it`);
          c.child.kill("SIGKILL");
          await c.exited;
        }
      }),
    );
  }
}
