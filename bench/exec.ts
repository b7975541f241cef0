// The environment stops too (docs/environment.md): a supervisor (lib/agent/supervisor, as `quiesce exec`
// drives it) holds a 50-process tree; it follows the run's server-sent events from the API process in this
// process, exactly as `quiesce exec` does (a kill naming the run acts at once; any other event reads the
// run, then pauses or resumes). Measured per tree, from the API call:
//   pause call → the whole tree frozen (the supervisor's pause returned: cgroup.freeze read back, or
//                every member stopped);
//   kill call  → the container read empty (grace 0: SIGTERM, then SIGKILL until empty).
// Baseline in the same run: the abort-token latency (kill call → a running handler's signal aborted,
// remote over SSE, bench/abort.ts), the same event path without a process to end. Reported as ratios,
// never asserted. Standalone: `tsx --conditions=react-server bench/exec.ts [--kills 100]`.
import os from "node:os";
import { mkdtempSync, rmSync } from "node:fs";
import path from "node:path";
import { performance } from "node:perf_hooks";
import type { BenchContext, BenchSection } from "./lib/section";
import { ms, type BenchTable } from "./lib/report";
import { percentile } from "./lib/measure";
import { runAbortBench } from "./abort";
import { ensureTeam } from "../lib/modules/members/admin-directory";
import { createApiKey } from "../lib/modules/keys/api-keys";
import { createRun } from "../lib/modules/runs/register/create-run";
import { pauseRun, resumeRun } from "../lib/modules/runs/lifecycle";
import { killRun } from "../lib/modules/stop/kill";
import { QuiesceClient } from "../lib/agent/sdk/client";
import { Supervisor } from "../lib/agent/supervisor/supervisor";
import { detect } from "../lib/agent/supervisor/container";
import { killNames } from "../lib/agent/abort/control-event";
import { environmentMeaning } from "../lib/control/evidence/environment";
import { startApiServer } from "../test/support/api-server";
import { closeControlListener } from "../lib/modules/stop/abort";
import { runStandalone } from "./lib/section";

const SYSTEM = { type: "system", name: "bench" } as const;
const TREE = 50;
const wallNow = () => performance.timeOrigin + performance.now();
/** A shell and 49 sleeps: 50 processes. */
const TREE_SCRIPT = `i=1; while [ $i -lt ${TREE} ]; do sleep 100000 & i=$((i+1)); done; wait`;

async function oneTree(teamId: string, client: QuiesceClient, stateDir: string, mechanism: ReturnType<typeof detect>) {
  const run = await createRun(SYSTEM, { taskId: "bench-exec", teamId });
  const sup = await Supervisor.start(["sh", "-c", TREE_SCRIPT], { runId: run.runId, stateDir, mechanism: mechanism.mechanism }, mechanism);
  const deadline = Date.now() + 30_000;
  while (sup.refresh() < TREE) {
    if (Date.now() > deadline) throw new Error(`the tree reached ${sup.liveCount()} of ${TREE} processes`);
    await new Promise((r) => setTimeout(r, 10));
  }
  const stop = new AbortController();
  let frozenAt = 0;
  let thawed = 0;
  let onFrozen: () => void = () => {};
  let onThawed: () => void = () => {};
  let onEmpty: () => void = () => {};
  let paused = false;
  let busy: Promise<void> = Promise.resolve();
  let evidence: Awaited<ReturnType<Supervisor["kill"]>> | null = null;
  // What `quiesce exec` does on each event (bin/commands/exec.ts), one reaction at a time.
  const react = (killed: boolean) =>
    (busy = busy.then(async () => {
      if (evidence) return;
      if (killed) {
        evidence = await sup.kill(0);
        onEmpty();
        return;
      }
      const r = await client.getRun(run.runId);
      if (r.lifecycle === "paused" && !paused) {
        await sup.pause();
        paused = true;
        frozenAt = wallNow();
        onFrozen();
      } else if (r.lifecycle === "normal" && paused) {
        await sup.resume();
        paused = false;
        thawed = wallNow();
        onThawed();
      }
    }));
  await client.subscribe(
    run.runId,
    (e) => {
      if (e.type === "control") void react(killNames(e.data, run.runId));
    },
    stop.signal,
  );
  try {
    const frozen = new Promise<void>((r) => (onFrozen = r));
    const pauseAt = wallNow();
    await pauseRun(SYSTEM, run.runId, "bench: pause");
    await frozen;
    const thaw = new Promise<void>((r) => (onThawed = r));
    const resumeAt = wallNow();
    await resumeRun(SYSTEM, run.runId, "bench: resume");
    await thaw;
    const empty = new Promise<void>((r) => (onEmpty = r));
    const killAt = wallNow();
    await killRun(SYSTEM, run.runId, "bench: kill");
    await empty;
    const ev = evidence!;
    return {
      pause: frozenAt - pauseAt,
      resume: thawed - resumeAt,
      // When the container was read empty (the supervisor's own evidence), not when kill() returned.
      kill: ev.emptyAt ? Date.parse(ev.emptyAt) - killAt : NaN,
      ended: ev.processes.length,
      verified: environmentMeaning(ev) === "process_terminated",
    };
  } finally {
    stop.abort();
    sup.markReported();
  }
}

export async function runExecBench(ctx: Pick<BenchContext, "log">, kills: number) {
  const mechanism = detect();
  const team = (await ensureTeam(SYSTEM, { slug: `bench-exec-${process.pid}`, name: "Bench exec" })).team;
  const agent = await createApiKey(SYSTEM, { teamId: team.id, kind: "agent", name: "bench supervisor" });
  const server = await startApiServer();
  const client = new QuiesceClient({ url: server.url, apiKey: agent.secret, timeoutMs: 30_000 });
  const stateDir = mkdtempSync(path.join(os.tmpdir(), "quiesce-bench-exec-"));
  const pause: number[] = [];
  const resume: number[] = [];
  const kill: number[] = [];
  let notVerified = 0;
  let ended = 0;
  try {
    await oneTree(team.id, client, stateDir, mechanism); // warm-up
    for (let i = 0; i < kills; i++) {
      const r = await oneTree(team.id, client, stateDir, mechanism);
      pause.push(r.pause);
      resume.push(r.resume);
      if (Number.isFinite(r.kill)) kill.push(r.kill);
      ended += r.ended;
      if (!r.verified) notVerified++;
      if ((i + 1) % 20 === 0) ctx.log(`exec: ${i + 1}/${kills} trees killed`);
    }
  } finally {
    await server.close();
    rmSync(stateDir, { recursive: true, force: true });
  }
  // The baseline, same run: the abort-token latency over the same event path (one measured round).
  const abort = (await runAbortBench(ctx, 1)).data as { sse: { fromCall: number[] } };
  await closeControlListener();
  const base = [...abort.sse.fromCall].sort((a, b) => a - b);
  const baseP50 = percentile(base, 50);
  const baseP99 = percentile(base, 99);
  const row = (what: string, xs: number[]) => {
    const s = [...xs].sort((a, b) => a - b);
    const p50 = percentile(s, 50);
    const p99 = percentile(s, 99);
    return [
      what,
      String(s.length),
      ms(p50),
      ms(p99),
      ms(s[s.length - 1] ?? NaN),
      `${(p50 / baseP50).toFixed(1)}×`,
      `${(p99 / baseP99).toFixed(1)}×`,
    ];
  };
  const table: BenchTable = {
    title: `Environment: API call → the ${TREE}-process tree frozen / thawed / empty, supervisor in ${mechanism.mechanism} (ms)`,
    columns: ["measure", "samples", "p50", "p99", "max", "p50 ÷ abort-token p50", "p99 ÷ abort-token p99"],
    rows: [
      row("pause call → tree frozen", pause),
      row("resume call → tree thawed", resume),
      row("kill call → container empty (grace 0)", kill),
      [
        "baseline: kill call → abort token fired (SSE)",
        String(base.length),
        ms(baseP50),
        ms(baseP99),
        ms(base[base.length - 1] ?? NaN),
        "1.0×",
        "1.0×",
      ],
    ],
    notes: [
      `${kills} trees after one warm-up, each a shell and ${TREE - 1} sleeps under a supervisor (${mechanism.mechanism}), paused, resumed and killed through the API functions; the supervisor follows the run's server-sent events from the API process in this process, reacting as \`quiesce exec\` does.`,
      `Every kill's evidence: ${ended} processes ended in all; ${notVerified} containers not verified empty.`,
      "Baseline, same run: the abort-token benchmark's remote mode (one round of 100 handlers, SSE + HTTP heartbeat), from the kill call.",
      `Node ${process.version}; ${os.cpus().length} CPUs; load average ${os
        .loadavg()
        .map((x) => x.toFixed(1))
        .join(" ")} at the end.`,
    ],
  };
  return { tables: [table], data: { mechanism: mechanism.mechanism, pause, resume, kill, baseline: base, notVerified } };
}

export const execSection: BenchSection = {
  name: "exec",
  title: "the environment: a supervised 50-process tree frozen and emptied from the API call",
  run: (ctx) => runExecBench(ctx, 100),
};

// Standalone: on its own fresh database, like `npm run bench -- --only exec`.
await runStandalone(import.meta.url, "kills", 100, runExecBench);
