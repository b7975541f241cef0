// Runs the real CLI (bin/quiesce.ts) as a separate process, the way `npm run quiesce -- …` does.
import { spawn } from "node:child_process";
import path from "node:path";

const ROOT = path.resolve(import.meta.dirname, "../..");

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export function runCli(args: string[], env: Record<string, string | undefined> = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--conditions=react-server", "--import", "tsx", path.join(ROOT, "bin/quiesce.ts"), ...args], {
      cwd: ROOT,
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => {
      stdout += d;
    });
    child.stderr.on("data", (d) => {
      stderr += d;
    });
    child.once("error", reject);
    child.once("close", (code) => resolve({ code, stdout, stderr }));
  });
}

/** Runs CLI invocations a few at a time: each is a whole Node process, and the CPUs are shared. */
export async function runCliAll(argvs: string[][], env: Record<string, string | undefined> = {}, parallel = 3): Promise<CliResult[]> {
  const out: CliResult[] = new Array(argvs.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(parallel, argvs.length) }, async () => {
      while (next < argvs.length) {
        const i = next++;
        out[i] = await runCli(argvs[i]!, env);
      }
    }),
  );
  return out;
}

/** Per-test timeout for tests that spawn CLI processes (no assertion depends on it). */
export const CLI_TEST_TIMEOUT = 300_000;
