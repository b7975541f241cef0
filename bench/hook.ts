// Claude Code hook cost per tool call: the bundled hook (`quiesce hook install`, one JavaScript file,
// no tsx) as Claude Code runs it — `sh -c 'node <file> claude-code || exit 2'`, a fresh process per
// event, a PreToolUse on stdin, the gate over real HTTP — against a baseline measured in the same run
// on the same machine: the same shell form around a bare `node -e 0`. Target: p50 ≤ 100 ms per call,
// read as the baseline plus the hook's own share (the ratio is what the figures compare across
// machines). Reported, never asserted. The older tsx entry (bin/quiesce-hook.mjs) is shown for scale.
// Baseline and hook calls alternate (a load change on a shared machine hits both alike), and each
// call's CPU time (user + system of the processes the shell ran, from bash's `times`) is reported
// beside the wall time: on a busy machine wall time mostly measures waiting for a core,
// CPU time what the call itself costs.
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import type { BenchContext, BenchSection } from "./lib/section";
import { ms, ratio, type BenchTable } from "./lib/report";
import { percentile } from "./lib/measure";
import { ensureTeam } from "../lib/modules/members/admin-directory";
import { createApiKey } from "../lib/modules/keys/api-keys";
import { buildHookBundle, HOOK_FILE, hookCommand } from "../lib/cli/hook-install";
import { startApiServer } from "../test/support/api-server";
import { QuiesceClient } from "../lib/agent/sdk/client";

const SYSTEM = { type: "system", name: "bench" } as const;
const TARGET_P50_MS = 100;
const ROOT = path.resolve(import.meta.dirname, "..");

interface Timing {
  wall: number;
  cpu: number;
}

/** "0m0.052000s" (sh's `times`) → ms. */
const timesMs = (s: string) => {
  const m = /^(\d+)m([\d.]+)s$/.exec(s);
  if (!m) throw new Error(`unexpected \`times\` output: ${s}`);
  return (Number(m[1]) * 60 + Number(m[2])) * 1000;
};

// bash's `times` reads getrusage (µs); dash's counts clock ticks (10 ms), too coarse for a ~60 ms call.
const SHELL = existsSync("/bin/bash") ? "/bin/bash" : "/bin/sh";

/** Runs `command` in a shell with `input` on stdin: wall time, and the CPU time of the shell's children. */
function runShell(command: string, input: string, env: NodeJS.ProcessEnv): Promise<Timing> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    // The command's own stdout goes nowhere; fd 3 carries `times` (line 2: the children's user, system).
    const child = spawn(SHELL, ["-c", `{ ${command} ; } >/dev/null 2>&1 3>&- && times >&3`], {
      env,
      stdio: ["pipe", "ignore", "ignore", "pipe"],
    });
    let out = "";
    child.stdio[3]!.on("data", (d: Buffer) => (out += d.toString()));
    child.once("error", reject);
    child.once("close", (code) => {
      const wall = performance.now() - t0;
      if (code !== 0) return reject(new Error(`${command} exited ${code}`));
      const [user, sys] = out.trim().split("\n")[1]!.trim().split(/\s+/);
      resolve({ wall, cpu: timesMs(user!) + timesMs(sys!) });
    });
    child.stdin!.end(input);
  });
}

const byWall = (xs: Timing[]) => xs.map((x) => x.wall).sort((a, b) => a - b);
const byCpu = (xs: Timing[]) => xs.map((x) => x.cpu).sort((a, b) => a - b);

/** n rounds; each round runs every function once, in turn, so they share the machine's load changes. */
async function interleaved(n: number, warmup: number, fs: ((i: number) => Promise<Timing>)[]): Promise<Timing[][]> {
  for (let i = 0; i < warmup; i++) for (const f of fs) await f(-1 - i);
  const out: Timing[][] = fs.map(() => []);
  for (let i = 0; i < n; i++) for (const [j, f] of fs.entries()) out[j]!.push(await f(i));
  return out;
}

async function sample(n: number, warmup: number, f: (i: number) => Promise<number>): Promise<number[]> {
  for (let i = 0; i < warmup; i++) await f(-1 - i);
  const out: number[] = [];
  for (let i = 0; i < n; i++) out.push(await f(i));
  return out.sort((a, b) => a - b);
}

export const hookSection: BenchSection = {
  name: "hook",
  title: "Claude Code hook: one PreToolUse call, bundled hook vs a bare node start",
  async run(ctx: BenchContext) {
    const dir = mkdtempSync(path.join(os.tmpdir(), "quiesce-bench-hook-"));
    const api = await startApiServer();
    try {
      const team = (await ensureTeam(SYSTEM, { slug: `bench-hook-${process.pid}`, name: "Bench hook" })).team;
      const key = await createApiKey(SYSTEM, { teamId: team.id, kind: "agent", name: "bench-hook" });
      const bundle = path.join(dir, HOOK_FILE);
      await buildHookBundle(bundle);
      const env: NodeJS.ProcessEnv = {
        ...process.env,
        HOME: dir,
        QUIESCE_URL: api.url,
        QUIESCE_API_KEY: key.secret,
        QUIESCE_HOOK_STATE_DIR: path.join(dir, "state"),
      };
      const session = `bench-${Date.now().toString(36)}`;
      const common = { session_id: session, transcript_path: `/tmp/${session}.jsonl`, cwd: dir };
      await runShell(hookCommand(bundle), JSON.stringify({ ...common, hook_event_name: "SessionStart", source: "startup" }), env);
      const pre = (i: number) =>
        JSON.stringify({
          ...common,
          hook_event_name: "PreToolUse",
          tool_name: "Bash",
          tool_input: { command: "true" },
          tool_use_id: `toolu_bench_${i}`,
        });
      // Process starts are slow; a tenth of the gate bench's iterations is plenty for a median.
      const n = Math.max(20, Math.min(200, Math.round(ctx.iterations / 10)));
      const warm = Math.min(5, ctx.warmup);
      ctx.log(`hook: ${n} calls each (baseline and bundled hook alternating, then the tsx entry)`);
      const [baseT, hookT] = await interleaved(n, warm, [
        () => runShell("node -e 0 || exit 2", "", env),
        (i) => runShell(hookCommand(bundle), pre(i), env),
      ]);
      const baseline = byWall(baseT!);
      const bundled = byWall(hookT!);
      const baselineCpu = byCpu(baseT!);
      const bundledCpu = byCpu(hookT!);
      // The gate's own HTTP round trip, from a client already running: what no hook process can avoid.
      const client = new QuiesceClient({ url: api.url, apiKey: key.secret, timeoutMs: 30_000 });
      const run = await client.createRun({ taskId: "bench-hook-rtt" });
      const rtt = await sample(n, warm, async (i) => {
        const t0 = performance.now();
        await client.gate({ runId: run.runId, leaseId: run.leaseId, epoch: run.epoch, operationId: `bench-rtt-${i}`, tool: "Bash" });
        return performance.now() - t0;
      });
      const tsxT = (
        await interleaved(Math.max(10, Math.round(n / 4)), 1, [
          (i) => runShell(`node ${path.join(ROOT, "bin/quiesce-hook.mjs")} claude-code || exit 2`, pre(100_000 + i), env),
        ])
      )[0]!;
      const tsxEntry = byWall(tsxT);
      const tsxCpu = byCpu(tsxT);
      const row = (name: string, wall: number[], cpu: number[] | null) => {
        const p50 = percentile(wall, 50);
        return [
          name,
          String(wall.length),
          ms(p50),
          ms(percentile(wall, 99)),
          ratio(p50 / percentile(baseline, 50)),
          cpu ? ms(percentile(cpu, 50)) : "—",
          cpu ? ratio(percentile(cpu, 50) / percentile(baselineCpu, 50)) : "—",
        ];
      };
      const hookP50 = percentile(bundled, 50);
      const wallRatio = hookP50 / percentile(baseline, 50);
      const cpuRatio = percentile(bundledCpu, 50) / percentile(baselineCpu, 50);
      const load = os.loadavg()[0]!.toFixed(1);
      const table: BenchTable = {
        title: "Claude Code hook, one PreToolUse per fresh process (ms)",
        columns: ["command", "calls", "wall p50", "wall p99", "wall p50 ÷ baseline", "CPU p50", "CPU p50 ÷ baseline"],
        rows: [
          row("`node -e 0` (baseline)", baseline, baselineCpu),
          row("gate HTTP round trip alone (warm client)", rtt, null),
          row("bundled hook (`quiesce hook install`)", bundled, bundledCpu),
          row("tsx entry (bin/quiesce-hook.mjs)", tsxEntry, tsxCpu),
        ],
        notes: [
          `Target: bundled hook p50 ≤ ${TARGET_P50_MS} ms; measured ${ms(hookP50)} ms wall (${hookP50 <= TARGET_P50_MS ? "met" : "NOT met"} on this machine, load ${load}).`,
          `The hook costs ${ratio(wallRatio)} the baseline's wall time and ${ratio(cpuRatio)} its CPU time: where \`node -e 0\` takes T ms, a call takes about ${ratio(cpuRatio)} T plus the gate's round trip.`,
          "Each hook call includes the gate's HTTP round trip to an API server in the bench process (shown alone above; CPU times count the hook process only).",
        ],
      };
      return { tables: [table], data: { baseline, baselineCpu, rtt, bundled, bundledCpu, tsxEntry, tsxCpu, load: Number(load) } };
    } finally {
      await api.close();
      rmSync(dir, { recursive: true, force: true });
    }
  },
};
