// A remote worker process: pg-boss guarded by the SDK worker guard, abort tokens over server-sent
// events, talking to the control plane only over HTTP (QUIESCE_URL / QUIESCE_API_KEY). Reports what
// it does as JSON lines: ready, started, outcome, stopped. Jobs with payload.long wait for their
// abort signal (a long call that honours cancellation).
import { QuiesceClient } from "../../../lib/agent/sdk/client";
import { WorkerGuard, sseFeed } from "../../../lib/agent/sdk/worker";
import { createPgBoss, ensureGuardedQueue, guardPgBossWork } from "../../../lib/agent/queues/pg-boss";

const emit = (o: Record<string, unknown>) => process.stdout.write(`${JSON.stringify({ worker: process.env.WORKER_ID, ...o })}\n`);
const queue = process.env.WORKER_QUEUE!;
const client = new QuiesceClient({ timeoutMs: 10_000 });
const guard = new WorkerGuard({ client, feed: sseFeed(client), holdRecheckMs: 5_000, heartbeatIntervalMs: 2_000 });
const boss = createPgBoss({ supervise: false });
boss.on("error", (e) => process.stderr.write(`[pg-boss] ${e.message}\n`));
await boss.start();
await ensureGuardedQueue(boss, queue, { redeliveryDelaySeconds: 1 });
const stop = new AbortController();

await guardPgBossWork<{ long?: boolean; label?: string }, string>(
  boss,
  queue,
  guard,
  async (payload, ctx) => {
    emit({ event: "started", operationId: ctx.stamp.operationId, label: payload.label });
    if (payload.long) {
      await new Promise((_, reject) => ctx.signal.addEventListener("abort", () => reject(ctx.signal.reason), { once: true }));
    }
    return "done";
  },
  {
    concurrency: Number(process.env.WORKER_CONCURRENCY ?? 1),
    stopSignal: stop.signal,
    onOutcome: (stamp, o) =>
      emit({ event: "outcome", operationId: stamp?.operationId, status: o.status, reason: (o as { reason?: string }).reason }),
  },
);
emit({ event: "ready", pid: process.pid });

process.on("SIGTERM", () => {
  stop.abort();
  void boss.stop({ graceful: true, timeout: 10_000, wait: true }).finally(() => {
    emit({ event: "stopped", counts: guard.counts.snapshot() });
    process.exit(0);
  });
});
