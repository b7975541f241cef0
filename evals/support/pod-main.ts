// A worker / gateway process of an eval run ("another pod"): the SDK worker guard over HTTP and
// server-sent events (lib/drill/executor.ts), talking to the control plane only through QUIESCE_URL
// with QUIESCE_API_KEY. The eval harness plays the queue: it hands jobs over on stdin as JSON lines
// ({id, cmd: "run" | "call" | "retry", …}); the pod answers on stdout with lines carrying the same id
// (admit, started, outcome, reply). With POD_QUEUE it also consumes a real pg-boss queue.
// SIGTERM: held jobs are given back, then the process exits.
import { createInterface } from "node:readline";
import { LocalExecutor } from "../../lib/drill/executor";
import type { JobBehaviour, RunHandle } from "../../lib/drill/types";
import { setting } from "../../lib/platform/config";

const name = setting("POD_NAME") ?? `pod-${process.pid}`;
const emit = (o: Record<string, unknown>) => process.stdout.write(`${JSON.stringify({ pod: name, ...o })}\n`);
const exec = new LocalExecutor({
  url: setting("QUIESCE_URL")!,
  apiKey: setting("QUIESCE_API_KEY")!,
  label: `${name} (pid ${process.pid})`,
  log: (l) => process.stderr.write(`${l}\n`),
});

function follow(id: string, h: RunHandle) {
  void h.firstAdmit.then((a) => {
    if (a.decision !== "none") emit({ id, event: "admit", ...a });
  });
  void h.started.then((s) => {
    if (s) emit({ id, event: "started", operationId: h.operationId });
  });
  void h.outcome.then((o) => emit({ id, event: "outcome", operationId: h.operationId, ...o }));
}

createInterface({ input: process.stdin }).on("line", (text) => {
  let m: { id: string; cmd: string; [k: string]: unknown };
  try {
    m = JSON.parse(text);
  } catch {
    return emit({ event: "error", message: `not JSON: ${text.slice(0, 200)}` });
  }
  const fail = (err: unknown) => emit({ id: m.id, event: "error", message: (err as Error).message });
  try {
    if (m.cmd === "run") follow(m.id, exec.run(m.stamp as never, m.job as never, (m.opts ?? {}) as never));
    else if (m.cmd === "call") exec.call(m.body as never, m.external as never).then((a) => emit({ id: m.id, event: "reply", ...a }), fail);
    else if (m.cmd === "retry") {
      exec.scheduleRetry(m.stamp as never, m.tool as string, m.delayMs as number, m.job as never).then((h) => {
        emit({ id: m.id, event: "reply", operationId: h.operationId });
        follow(m.id, h);
      }, fail);
    } else fail(new Error(`unknown cmd ${m.cmd}`));
  } catch (err) {
    fail(err);
  }
});

// POD_QUEUE: also consume that pg-boss queue (a real durable queue in the same PostgreSQL) through the
// guard; each job's payload names its behaviour. Lines carry the job's operationId.
const queue = setting("POD_QUEUE");
let stopQueue = async () => {};
if (queue) {
  const { createPgBoss, ensureGuardedQueue, guardPgBossWork } = await import("../../lib/agent/queues/pg-boss");
  const { perform } = await import("../../lib/drill/executor");
  const boss = createPgBoss({ supervise: false, max: 3 });
  boss.on("error", (e) => process.stderr.write(`[pg-boss] ${e.message}\n`));
  await boss.start();
  await ensureGuardedQueue(boss, queue, { redeliveryDelaySeconds: 1 });
  const stop = new AbortController();
  await guardPgBossWork<{ job: JobBehaviour }, string>(
    boss,
    queue,
    exec.guard(),
    async (payload, ctx) => {
      emit({ event: "started", operationId: ctx.stamp.operationId, via: "pg-boss" });
      return perform(payload.job, ctx);
    },
    {
      concurrency: setting("POD_QUEUE_CONCURRENCY"),
      stopSignal: stop.signal,
      pollingIntervalSeconds: 0.5,
      onOutcome: (stamp, o) =>
        emit({
          event: "outcome",
          operationId: stamp?.operationId ?? null,
          via: "pg-boss",
          status: o.status,
          reason: (o as { reason?: string }).reason ?? null,
        }),
    },
  );
  stopQueue = async () => {
    stop.abort();
    await boss.stop({ graceful: true, timeout: 10_000, wait: true });
  };
}

process.once("SIGTERM", () => {
  void Promise.allSettled([stopQueue(), exec.close()]).finally(() => setTimeout(() => process.exit(0), 200));
});
emit({ event: "ready", pid: process.pid, queue: queue ?? null });
