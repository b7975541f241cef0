// Claude Code hook cost per tool call: the bundled hook (`quiesce hook install`, one JavaScript file,
// no tsx) as Claude Code runs it — `sh -c 'node <file> claude-code || exit 2'`, a fresh process per
// event, a PreToolUse on stdin, the gate over real HTTP — against a baseline measured in the same run
// on the same machine: the same shell form around a bare `node -e 0`. Target: p50 ≤ 100 ms per call,
// read as the baseline plus the hook's own share (the ratio is what the figures compare across
// machines). Reported, never asserted. The older tsx entry (bin/quiesce-hook.mjs) is shown for scale.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import type { BenchContext, BenchSection } from "./lib/section";
import { ms, ratio, type BenchTable } from "./lib/report";
import { percentile } from "./lib/measure";
import { ensureTeam } from "../lib/dal/admin-directory";
import { createApiKey } from "../lib/dal/api-keys";
import { buildHookBundle, HOOK_FILE, hookCommand } from "../lib/cli/hook-install";
import { startApiServer } from "../test/support/api-server";
import { QuiesceClient } from "../lib/sdk/client";

const SYSTEM = { type: "system", name: "bench" } as const;
const TARGET_P50_MS = 100;
const ROOT = path.resolve(import.meta.dirname, "..");

function runShell(command: string, input: string, env: NodeJS.ProcessEnv): Promise<number> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn("/bin/sh", ["-c", command], { env, stdio: ["pipe", "ignore", "ignore"] });
    child.once("error", reject);
    child.once("close", (code) => (code === 0 ? resolve(performance.now() - t0) : reject(new Error(`${command} exited ${code}`))));
    child.stdin.end(input);
  });
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
      ctx.log(`hook: ${n} calls each (baseline, bundled hook, tsx entry)`);
      const baseline = await sample(n, warm, () => runShell("node -e 0 || exit 2", "", env));
      const bundled = await sample(n, warm, (i) => runShell(hookCommand(bundle), pre(i), env));
      // The gate's own HTTP round trip, from a client already running: what no hook process can avoid.
      const client = new QuiesceClient({ url: api.url, apiKey: key.secret, timeoutMs: 30_000 });
      const run = await client.createRun({ taskId: "bench-hook-rtt" });
      const rtt = await sample(n, warm, async (i) => {
        const t0 = performance.now();
        await client.gate({ runId: run.runId, leaseId: run.leaseId, epoch: run.epoch, operationId: `bench-rtt-${i}`, tool: "Bash" });
        return performance.now() - t0;
      });
      const tsxEntry = await sample(Math.max(10, Math.round(n / 4)), 1, (i) =>
        runShell(`node ${path.join(ROOT, "bin/quiesce-hook.mjs")} claude-code || exit 2`, pre(100_000 + i), env),
      );
      const row = (name: string, xs: number[]) => {
        const p50 = percentile(xs, 50);
        return [name, String(xs.length), ms(p50), ms(percentile(xs, 99)), ratio(p50 / percentile(baseline, 50))];
      };
      const hookP50 = percentile(bundled, 50);
      const table: BenchTable = {
        title: "Claude Code hook, one PreToolUse per fresh process (ms)",
        columns: ["command", "calls", "p50", "p99", "p50 ÷ baseline p50"],
        rows: [
          row("`node -e 0` (baseline)", baseline),
          row("gate HTTP round trip alone (warm client)", rtt),
          row("bundled hook (`quiesce hook install`)", bundled),
          row("tsx entry (bin/quiesce-hook.mjs)", tsxEntry),
        ],
        notes: [
          `Target: bundled hook p50 ≤ ${TARGET_P50_MS} ms; measured ${ms(hookP50)} ms (${hookP50 <= TARGET_P50_MS ? "met" : "NOT met"} on this machine, load ${os.loadavg()[0]!.toFixed(1)}).`,
          "Each hook call includes the gate's HTTP round trip to an API server in the bench process (shown alone above);",
          "the hook's own share is its p50 minus the baseline and the round trip.",
        ],
      };
      return { tables: [table], data: { baseline, rtt, bundled, tsxEntry } };
    } finally {
      await api.close();
      rmSync(dir, { recursive: true, force: true });
    }
  },
};
