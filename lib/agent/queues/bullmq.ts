// BullMQ integration (Redis): the same contract as pg-boss.ts. Producers register and stamp each
// job (jobId = the operation id, so the barrier finds it); `guardBullMQWorker` wraps the Worker
// processor: admit at dequeue, abort token merged with BullMQ's own signal, denied jobs completed
// without running. A job given back (held too long, control plane unreachable) is moved to delayed
// with BullMQ's DelayedError, which does not spend one of its attempts.
import { DelayedError, Queue, Worker, type Job, type WorkerOptions } from "bullmq";
import { Redis } from "ioredis";
import { readStamp, type JobStamp } from "../sdk/worker/stamp";
import { ControlUnavailableError, StillHeldError, type GuardOutcome, type JobContext, type WorkerGuard } from "../sdk/worker/guard";
import { registerJob, retryInput, type EnqueueInput, type Enqueued, type JobData, type ProducerClient } from "./enqueue";

import { BULLMQ_PREFIX, redisUrl } from "./names";
export { BULLMQ_PREFIX, redisUrl };

/** A connection suitable for Workers (BullMQ requires maxRetriesPerRequest: null for blocking calls). */
export function redisConnection(url = redisUrl()): Redis {
  return new Redis(url, { maxRetriesPerRequest: null });
}

export async function enqueueBullMQ<T>(queue: Queue, client: ProducerClient, input: EnqueueInput<T>): Promise<Enqueued> {
  const { data, enqueued } = await registerJob(client, BULLMQ_PREFIX + queue.name, input, (op) => op);
  const delay = Math.max(0, input.delayMs ?? 0);
  await queue.add(input.tool, data, {
    jobId: enqueued.jobId,
    delay,
    attempts: 1,
    removeOnComplete: { count: 1000 },
    removeOnFail: { count: 1000 },
  });
  return enqueued;
}

export type BullMQHandler<T, R> = (payload: T, ctx: JobContext & { job: Job<JobData<T>> }) => Promise<R>;

export interface GuardBullMQOptions {
  connection: WorkerOptions["connection"];
  concurrency?: number;
  /** Given-back jobs are delivered again after this long; default 2000 ms. */
  redeliveryDelayMs?: number;
  retry?: { limit: number; delayMs: number };
  /** Needed for guard-managed retries (they are registered as operations). */
  producer?: ProducerClient;
  /** Queue handle used to add retry jobs (defaults to one on the same connection). */
  queue?: Queue;
  onOutcome?: (stamp: JobStamp | null, outcome: GuardOutcome<unknown> | { status: "unstamped" }, job: Job) => void;
  workerOptions?: Omit<WorkerOptions, "connection" | "concurrency">;
}

export function guardBullMQWorker<T, R>(
  queueName: string,
  guard: WorkerGuard,
  handler: BullMQHandler<T, R>,
  o: GuardBullMQOptions,
): Worker<JobData<T>> {
  let retryQueue = o.queue;
  const worker = new Worker<JobData<T>>(
    queueName,
    async (job, token, signal) => {
      const stamp = readStamp(job.data);
      if (!stamp) {
        guard.counts.add("discarded_unstamped");
        o.onOutcome?.(null, { status: "unstamped" }, job);
        return { quiesce: "discarded", reason: "unstamped" };
      }
      let outcome: GuardOutcome<R>;
      try {
        outcome = await guard.run(stamp, (ctx) => handler(job.data.payload, { ...ctx, job }), { signal });
      } catch (err) {
        if ((err instanceof ControlUnavailableError || err instanceof StillHeldError) && token) {
          // Not run, not decided: back to the queue without spending an attempt.
          await job.moveToDelayed(Date.now() + (o.redeliveryDelayMs ?? 2000), token);
          throw new DelayedError();
        }
        throw err;
      }
      o.onOutcome?.(stamp, outcome, job);
      if (outcome.status === "failed" && o.retry && o.producer && (stamp.attempt ?? 0) < o.retry.limit) {
        retryQueue ??= new Queue(queueName, { connection: o.connection });
        await enqueueBullMQ(retryQueue, o.producer, retryInput(stamp, job.data.tool, job.data.payload, o.retry.delayMs)).then(
          () => guard.counts.add("retry_scheduled"),
          () => guard.counts.add("retry_refused"),
        );
      }
      return {
        quiesce: outcome.status,
        ...(outcome.status === "discarded" ? { reason: outcome.reason } : {}),
        ...(outcome.status === "aborted_unknown" ? { reason: outcome.reason } : {}),
      };
    },
    { ...o.workerOptions, connection: o.connection, concurrency: o.concurrency ?? 1 },
  );
  const close = worker.close.bind(worker);
  worker.close = async (force?: boolean) => {
    await close(force);
    if (retryQueue && retryQueue !== o.queue) await retryQueue.close();
  };
  return worker;
}
