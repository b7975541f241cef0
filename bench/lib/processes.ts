// Processes a bench section starts and stops: a free port to give them, a Node child process started
// from the checkout and awaited until it answers HTTP, and its orderly stop. Shared by the HTTP,
// fleet and memory sections.
import path from "node:path";
import net from "node:net";
import { readFileSync } from "node:fs";
import { spawn, type ChildProcess } from "node:child_process";

const ROOT = path.resolve(import.meta.dirname, "../..");

/** A port nothing listens on right now (the OS picks it; freed at once for the child to take). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

export interface Proc {
  name: string;
  url: string;
  child: ChildProcess;
}

async function waitFor(url: string, child: ChildProcess, name: string, output: () => string): Promise<void> {
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`${name} exited (${child.exitCode}):\n${output()}`);
    try {
      const r = await fetch(url);
      if (r.ok) return;
    } catch {
      /* not listening yet */
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`${name} did not answer ${url} within 120 s:\n${output()}`);
}

/** `node <args>` in the checkout (or `cwd`: the A/B's other checkout), resolved once `probe` on `port` answers 2xx (within 120 s). */
export async function startProcess(
  name: string,
  args: string[],
  env: Record<string, string>,
  port: number,
  probe: string,
  cwd: string = ROOT,
): Promise<Proc> {
  const child = spawn(process.execPath, args, { cwd, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  const keep = (b: Buffer) => {
    out = (out + b.toString()).slice(-4000);
  };
  child.stdout!.on("data", keep);
  child.stderr!.on("data", keep);
  const url = `http://127.0.0.1:${port}`;
  await waitFor(url + probe, child, name, () => out);
  return { name, url, child };
}

/** SIGTERM, then SIGKILL after 5 s. */
export async function stopProcess(p: Proc | undefined): Promise<void> {
  if (!p || p.child.exitCode !== null) return;
  const exited = new Promise((r) => p.child.once("exit", r));
  p.child.kill("SIGTERM");
  await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
  if (p.child.exitCode === null) p.child.kill("SIGKILL");
}

/** CPU time (user + system) a process has used so far, in ms (Linux /proc, clock ticks of 10 ms; NaN elsewhere). */
export function cpuMsOf(pid: number | undefined): number {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = f.slice(f.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return NaN;
  }
}
