// Abort-token latency: kill committed → the running handler's AbortSignal fired, for 100
// concurrent running handlers (a tree of 10 runs × 10 operations, each handler inside WorkerGuard.run
// awaiting its signal), in two modes:
//   listen — in-process: PostgreSQL LISTEN quiesce_control + the gate's heartbeat in one round trip
//   sse    — remote: GET /api/v1/runs/{id}/events (server-sent events) + HTTP heartbeat
// "From kill call" is the target (p99 ≤ 50 ms remote): the kill's dispatch-stop transaction
// plus delivery. "Committed" is the barrier's dispatch_stopped_at, written inside that transaction
// before its last statements and COMMIT (so the figure slightly overstates the latency after commit).
// Baseline in the same run: a bare NOTIFY (a wake-up that changes nothing) committed on the same
// channel and delivered through the same feed — the floor of any design built on LISTEN / SSE.
// The API server runs in this process (real HTTP, real route handlers), so in sse mode one event loop
// serves the stream and runs the 100 handlers. Target p99 < 100 ms. Reported, never asserted.
// Standalone: `tsx --conditions=react-server bench/abort.ts [--rounds 5]`.
import os from "node:os";
import { performance } from "node:perf_hooks";
import type { BenchContext, BenchSection } from "./lib/section";
import { ms, type BenchTable } from "./lib/report";
import { percentile } from "./lib/measure";
import { ensureTeam } from "../lib/modules/members/admin-directory";
import { createApiKey } from "../lib/modules/keys/api-keys";
import { createRun } from "../lib/modules/runs/register/create-run";
import { registerOperation } from "../lib/modules/runs/operations";
import { killRun } from "../lib/modules/stop/kill";
import { prisma } from "../lib/platform/db/prisma";
import { QuiesceClient } from "../lib/agent/sdk/client";
import { WorkerGuard, sseFeed } from "../lib/agent/sdk/worker";
import { gateRecheck, listenFeed, closeControlListener } from "../lib/modules/stop/abort";
import { startApiServer } from "../test/support/api-server";
import { newId } from "../lib/platform/ids";
import { setting } from "../lib/platform/config";
import { pool } from "../lib/platform/db/pool";
import { CONTROL_CHANNEL } from "../lib/schemas/control-event";
import { runStandalone } from "./lib/section";

const SYSTEM = { type: "system", name: "bench" } as const;
const RUNS = 10;
const PER_RUN = 10;
const TARGET_P99_MS = 50;
const BASELINE_PER_ROUND = 5;
type Mode = "listen" | "sse";

const wallNow = () => performance.timeOrigin + performance.now();

async function round(mode: Mode, teamId: string, client: QuiesceClient, workerKey: string) {
  const root = await createRun(SYSTEM, { taskId: "bench-abort", teamId });
  const runs = [root];
  for (let i = 1; i < RUNS; i++) runs.push(await createRun(SYSTEM, { taskId: "bench-abort", teamId, parentRunId: root.runId }));
  const feed = mode === "listen" ? listenFeed({ resolveRoot: async () => root.runId }) : sseFeed(client);
  const guard = new WorkerGuard({
    client,
    feed,
    ...(mode === "listen" ? { recheck: gateRecheck(workerKey) } : {}),
    heartbeatIntervalMs: 600_000,
  });
  const abortedAt: number[] = [];
  let started = 0;
  let allStarted!: () => void;
  const ready = new Promise<void>((r) => {
    allStarted = r;
  });
  const jobs: Promise<unknown>[] = [];
  for (const r of runs) {
    for (let j = 0; j < PER_RUN; j++) {
      const operationId = newId("op");
      await registerOperation(SYSTEM, {
        teamId,
        runId: r.runId,
        leaseId: r.leaseId,
        epoch: r.epoch,
        operationId,
        kind: "queued",
        tool: "bench.long_call",
      });
      jobs.push(
        guard.run(
          { runId: r.runId, leaseId: r.leaseId, epoch: r.epoch, operationId },
          (ctx) =>
            new Promise((_, reject) => {
              ctx.signal.addEventListener(
                "abort",
                () => {
                  abortedAt.push(wallNow());
                  reject(ctx.signal.reason);
                },
                { once: true },
              );
              if (++started === RUNS * PER_RUN) allStarted();
            }),
        ),
      );
    }
  }
  await ready;
  // Baseline: bare notifications (kind receipt: no token re-checks or aborts on it) through the same feed.
  const baseline: number[] = [];
  let expect = "";
  let delivered: () => void = () => {};
  const unwatch = await feed.watch(root.runId, (e) => {
    if (e.kind === "receipt" && e.barrierId === expect) delivered();
  });
  for (let i = 0; i < BASELINE_PER_ROUND; i++) {
    expect = newId("rcpt");
    const arrived = new Promise<void>((r) => (delivered = r));
    const t0 = wallNow();
    await pool().query("SELECT pg_notify($1, $2)", [
      CONTROL_CHANNEL,
      JSON.stringify({ kind: "receipt", teamId, rootRunId: root.runId, barrierId: expect }),
    ]);
    await arrived;
    baseline.push(wallNow() - t0);
  }
  unwatch();
  const callAt = wallNow();
  const { barrierId } = await killRun(SYSTEM, root.runId, "bench: abort latency");
  const outcomes = await Promise.all(jobs);
  const barrier = await prisma().barrier.findUniqueOrThrow({ where: { id: barrierId }, select: { dispatchStoppedAt: true } });
  const committedAt = barrier.dispatchStoppedAt!.getTime();
  const notAborted = outcomes.filter((o) => (o as { status: string }).status !== "aborted_unknown").length;
  return { fromCommit: abortedAt.map((t) => t - committedAt), fromCall: abortedAt.map((t) => t - callAt), notAborted, baseline };
}

export async function runAbortBench(ctx: Pick<BenchContext, "log">, rounds: number) {
  const team = (await ensureTeam(SYSTEM, { slug: `bench-abort-${process.pid}`, name: "Bench abort" })).team;
  const worker = await createApiKey(SYSTEM, { teamId: team.id, kind: "worker", name: "bench worker" });
  const server = await startApiServer();
  const client = new QuiesceClient({ url: server.url, apiKey: worker.secret, timeoutMs: 30_000 });
  const rows: string[][] = [];
  const data: Record<string, unknown> = {};
  try {
    for (const mode of ["listen", "sse"] as Mode[]) {
      const fromCommit: number[] = [];
      const fromCall: number[] = [];
      const baseline: number[] = [];
      let notAborted = 0;
      await round(mode, team.id, client, worker.secret); // warm-up: connections, prepared statements, route modules
      for (let i = 0; i < rounds; i++) {
        const r = await round(mode, team.id, client, worker.secret);
        fromCommit.push(...r.fromCommit);
        fromCall.push(...r.fromCall);
        baseline.push(...r.baseline);
        notAborted += r.notAborted;
        ctx.log(
          `abort ${mode}: round ${i + 1}/${rounds} p99 ${ms(
            percentile(
              [...r.fromCommit].sort((a, b) => a - b),
              99,
            ),
          )} ms`,
        );
      }
      fromCommit.sort((a, b) => a - b);
      fromCall.sort((a, b) => a - b);
      baseline.sort((a, b) => a - b);
      const p99 = percentile(fromCommit, 99);
      const p99Call = percentile(fromCall, 99);
      const p99Base = percentile(baseline, 99);
      rows.push([
        mode === "listen" ? "in-process (LISTEN + gate heartbeat)" : "remote (SSE + HTTP heartbeat)",
        String(RUNS * PER_RUN),
        String(fromCommit.length),
        ms(percentile(fromCommit, 50)),
        ms(p99),
        ms(fromCommit[fromCommit.length - 1] ?? NaN),
        ms(percentile(fromCall, 50)),
        ms(p99Call),
        p99Call <= TARGET_P99_MS ? "yes" : "no",
        ms(p99Base),
        `${(p99Call / p99Base).toFixed(1)}×`,
        String(notAborted),
      ]);
      data[mode] = { fromCommit, fromCall, baseline, notAborted };
    }
  } finally {
    await server.close();
    await closeControlListener();
  }
  const table: BenchTable = {
    title: "Abort-token latency: kill committed → running handler's signal aborted (ms)",
    columns: [
      "mode",
      "concurrent handlers",
      "samples",
      "p50",
      "p99",
      "max",
      "p50 from kill call",
      "p99 from kill call",
      `p99 from kill call ≤ ${TARGET_P99_MS} ms`,
      "baseline p99: bare NOTIFY → feed",
      "p99 from kill call ÷ baseline p99",
      "not aborted",
    ],
    rows,
    notes: [
      `${RUNS} runs (a root and ${RUNS - 1} children) × ${PER_RUN} running operations, each handler inside WorkerGuard.run awaiting its AbortSignal; ${rounds} measured rounds after one warm-up round.`,
      "Committed = the barrier's dispatch_stopped_at (set inside the kill's dispatch-stop transaction, before its audit row and COMMIT); 'from kill call' includes that transaction (the target's measure).",
      `Baseline, same run: ${BASELINE_PER_ROUND} bare notifications per round (a wake-up that changes nothing) committed and delivered through the same feed (LISTEN, or SSE over the API process) — the floor of this design.`,
      "A kill notification that names the run aborts its tokens at once (a kill is terminal); any other wake-up is re-checked through one heartbeat per run before aborting. Heartbeat-based designs take one heartbeat interval (seconds to minutes).",
      `Node ${process.version}; ${os.cpus().length} CPUs; load average ${os
        .loadavg()
        .map((x) => x.toFixed(1))
        .join(" ")} at the end.`,
    ],
  };
  return { tables: [table], data };
}

export const abortSection: BenchSection = {
  name: "abort",
  title: "abort-token latency, 100 concurrent running handlers (LISTEN and SSE)",
  run: (ctx) => runAbortBench(ctx, setting("QUIESCE_BENCH_ABORT_ROUNDS")),
};

// Standalone: on its own fresh database, like `npm run bench -- --only abort`.
await runStandalone(import.meta.url, "rounds", 5, runAbortBench);
