// The demo fleet's queued work: a real pg-boss queue in Quiesce's database, processed by a worker
// under the worker guard (admission at dequeue, abort tokens over server-sent events, heartbeats,
// effect reports, guard-managed retries registered as operations). If pg-boss cannot start (no
// database reachable from here), jobs are held in this process instead — same registration, same
// stamps, same guard — so the demo still shows queued and scheduled work.
import type PgBoss from "pg-boss";
import type { QuiesceClient } from "../agent/sdk/client";
import { WorkerGuard, sseFeed, type JobContext, type JobStamp } from "../agent/sdk/worker";
import { createPgBoss, ensureGuardedQueue, enqueuePgBoss, guardPgBossWork } from "../agent/queues/pg-boss";
import { registerJob, retryInput, type EnqueueInput } from "../agent/queues/enqueue";
import { pause } from "./backoff";

export const DEMO_QUEUES = { checks: "demo-db-checks", ticket: "demo-ticket-updates" } as const;
type QueueName = (typeof DEMO_QUEUES)[keyof typeof DEMO_QUEUES];

export interface DemoPayload {
  label: string;
  durationMs: number;
  failFirst?: boolean;
  effectId: string;
}

export interface DemoQueues {
  enqueue(queue: QueueName, input: EnqueueInput<DemoPayload>): Promise<void>;
  guard: WorkerGuard;
  stop(): Promise<void>;
}

/** What a demo job does: takes a while (honouring its abort signal), then records its effect. */
async function work(p: DemoPayload, ctx: JobContext): Promise<string> {
  await pause(p.durationMs, ctx.signal);
  if (ctx.signal.aborted) throw ctx.signal.reason;
  if (p.failFirst && (ctx.stamp.attempt ?? 0) === 0) throw new Error(`${p.label}: database not ready yet`);
  await ctx.recordEffect({ providerOperationId: `${p.effectId}-${ctx.stamp.operationId.slice(-6)}`, detail: { label: p.label } });
  return "ok";
}

const RETRY = { limit: 2, delayMs: 20_000 };

export async function startDemoQueues(o: {
  agent: QuiesceClient;
  worker: QuiesceClient;
  log: (m: string) => void;
  stop: AbortSignal;
}): Promise<DemoQueues> {
  const guard = new WorkerGuard({ client: o.worker, feed: sseFeed(o.worker), holdRecheckMs: 20_000, holdMaxMs: 5 * 60_000, log: o.log });
  const onOutcome = (s: JobStamp | null, out: { status: string }) => {
    if (out.status !== "completed")
      o.log(`job ${s?.operationId ?? "(unstamped)"}: ${out.status}${"reason" in out ? ` (${(out as { reason: string }).reason})` : ""}`);
  };
  let boss: PgBoss | null = createPgBoss({ max: 3 });
  try {
    boss.on("error", (e) => o.log(`pg-boss: ${e.message}`));
    await boss.start();
    for (const q of Object.values(DEMO_QUEUES)) {
      await ensureGuardedQueue(boss, q, { redeliveryDelaySeconds: 5 });
      await guardPgBossWork<DemoPayload, string>(boss, q, guard, work, {
        concurrency: 4,
        retry: RETRY,
        producer: o.agent,
        stopSignal: o.stop,
        onOutcome,
      });
    }
    const b = boss;
    return {
      guard,
      enqueue: async (queue, input) => {
        await enqueuePgBoss(b, o.agent, queue, input);
      },
      stop: async () => {
        await b.stop({ graceful: true, timeout: 3000, wait: true }).catch(() => {});
      },
    };
  } catch (err) {
    o.log(`pg-boss unavailable (${(err as Error).message}); holding demo jobs in this process`);
    await boss?.stop({ graceful: false }).catch(() => {});
    boss = null;
    return localQueues(o, guard, onOutcome);
  }
}

function localQueues(
  o: { agent: QuiesceClient; stop: AbortSignal },
  guard: WorkerGuard,
  onOutcome: (s: JobStamp, out: { status: string }) => void,
): DemoQueues {
  const timers = new Set<NodeJS.Timeout>();
  const enqueue = async (queue: QueueName, input: EnqueueInput<DemoPayload>): Promise<void> => {
    const { data } = await registerJob(o.agent, `local:${queue}`, input, (op) => op);
    const t = setTimeout(
      async () => {
        timers.delete(t);
        const out = await guard
          .run(data.quiesce, (ctx) => work(data.payload, ctx), { signal: o.stop })
          .catch((e: Error) => ({ status: `not run: ${e.message}` }));
        onOutcome(data.quiesce, out);
        if (out.status === "failed" && (data.quiesce.attempt ?? 0) < RETRY.limit) {
          await enqueue(queue, retryInput(data.quiesce, data.tool, data.payload, RETRY.delayMs)).catch(() => {});
        }
      },
      Math.max(0, input.delayMs ?? 0) + 500,
    );
    timers.add(t);
  };
  return {
    guard,
    enqueue,
    stop: async () => {
      for (const t of timers) clearTimeout(t);
    },
  };
}
