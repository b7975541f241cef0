// pg-boss 10 integration (docs/architecture.md#integrations-fail-closed): its queue lives in the same PostgreSQL, in its own schema
// ("pgboss"). Producers register each job as an operation and stamp it; `guardPgBossWork` wraps
// `boss.work` so every job is admitted at dequeue, runs under an abort token, and a denied job is
// acknowledged (completed, with the reason as output) without running. pg-boss never aborts a running
// handler on its own; the abort token does.
//
// Two kinds of "again", kept apart on purpose:
//  - redelivery: the job goes back to its queue unchanged (control plane unreachable at dequeue, held
//    longer than holdMaxMs, worker died) — pg-boss's own retry, same operation id, admitted afresh;
//  - retry: the handler failed — a NEW operation (kind "retry", id "<op>.r<n>") and a new delayed job
//    under the original lease and epoch, so a kill cancels it and a late one is denied stale_epoch.
import PgBoss from "pg-boss";
import { databaseUrl } from "../../platform/db/url";
import { readStamp, type JobStamp } from "../sdk/worker/stamp";
import { type GuardOutcome, type JobContext, type WorkerGuard } from "../sdk/worker/guard";
import { registerJob, retryInput, type EnqueueInput, type Enqueued, type JobData, type ProducerClient } from "./enqueue";
import { randomUUID } from "node:crypto";

import { PGBOSS_PREFIX, PGBOSS_SCHEMA } from "./names";
export { PGBOSS_PREFIX, PGBOSS_SCHEMA };

/** A pg-boss instance on Quiesce's database, in its own schema. Call start() before use. */
export function createPgBoss(opts: { connectionString?: string; max?: number; supervise?: boolean } = {}): PgBoss {
  return new PgBoss({
    connectionString: opts.connectionString ?? databaseUrl(),
    schema: PGBOSS_SCHEMA,
    max: opts.max ?? 4,
    supervise: opts.supervise ?? true,
    schedule: false,
    application_name: "quiesce-pgboss",
  });
}

export interface GuardedQueueOptions {
  /** A job (held or running) older than this is failed by pg-boss and redelivered; default 15 min. */
  expireInSeconds?: number;
  /** Redeliveries of a job given back to the queue; default 100. */
  redeliveries?: number;
  /** Seconds before a given-back job is delivered again; default 2. */
  redeliveryDelaySeconds?: number;
}

/** pg-boss 10 needs a queue before send/work; idempotent. */
export async function ensureGuardedQueue(boss: PgBoss, queue: string, o: GuardedQueueOptions = {}): Promise<void> {
  await boss.createQueue(queue, {
    name: queue,
    retryLimit: o.redeliveries ?? 100,
    retryDelay: o.redeliveryDelaySeconds ?? 2,
    retryBackoff: false,
    expireInSeconds: o.expireInSeconds ?? 15 * 60,
  });
}

/** Register the operation, then send the stamped job with the id the operation names. */
export async function enqueuePgBoss<T>(boss: PgBoss, client: ProducerClient, queue: string, input: EnqueueInput<T>): Promise<Enqueued> {
  const { data, enqueued, notBefore } = await registerJob(client, PGBOSS_PREFIX + queue, input, () => randomUUID());
  await boss.send(queue, data as object, { id: enqueued.jobId, ...(notBefore ? { startAfter: notBefore } : {}) });
  return enqueued;
}

export type PgBossHandler<T, R> = (payload: T, ctx: JobContext & { job: PgBoss.Job<JobData<T>> }) => Promise<R>;

export interface GuardPgBossOptions {
  /** Parallel handlers in this process (pg-boss 10: one work() loop each). Default 1. */
  concurrency?: number;
  pollingIntervalSeconds?: number;
  /** Guard-managed retries of failed handlers; needs `producer` to register them. */
  retry?: { limit: number; delayMs: number };
  producer?: ProducerClient;
  /** Abort it when stopping the worker: held jobs go back to the queue, running handlers are told. */
  stopSignal?: AbortSignal;
  onOutcome?: (stamp: JobStamp | null, outcome: GuardOutcome<unknown> | { status: "unstamped" }, job: PgBoss.Job<unknown>) => void;
}

export async function guardPgBossWork<T, R>(
  boss: PgBoss,
  queue: string,
  guard: WorkerGuard,
  handler: PgBossHandler<T, R>,
  o: GuardPgBossOptions = {},
): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < (o.concurrency ?? 1); i++) {
    ids.push(
      await boss.work<JobData<T>>(queue, { batchSize: 1, pollingIntervalSeconds: o.pollingIntervalSeconds ?? 0.5 }, async ([job]) => {
        if (!job) return;
        const stamp = readStamp(job.data);
        if (!stamp) {
          // No stamp, no authority: acknowledged without running.
          guard.counts.add("discarded_unstamped");
          o.onOutcome?.(null, { status: "unstamped" }, job);
          return { quiesce: "discarded", reason: "unstamped" };
        }
        // ControlUnavailableError / StillHeldError propagate: the job was NOT run and nothing was
        // decided, so pg-boss fails it and redelivers it later under the same operation id.
        const outcome = await guard.run(stamp, (ctx) => handler(job.data.payload, { ...ctx, job }), { signal: o.stopSignal });
        o.onOutcome?.(stamp, outcome, job);
        if (outcome.status === "failed" && o.retry && o.producer && (stamp.attempt ?? 0) < o.retry.limit) {
          await enqueuePgBoss(boss, o.producer, queue, retryInput(stamp, job.data.tool, job.data.payload, o.retry.delayMs)).then(
            () => guard.counts.add("retry_scheduled"),
            () => guard.counts.add("retry_refused"), // e.g. the run was killed meanwhile: 409
          );
        }
        return summarize(outcome);
      }),
    );
  }
  return ids;
}

/** The job's output in pg-boss: what the guard decided, never the handler's data. */
function summarize(o: GuardOutcome<unknown>): object {
  switch (o.status) {
    case "discarded":
      return { quiesce: "discarded", reason: o.reason, counter: o.counter };
    case "aborted_unknown":
      return { quiesce: "aborted_unknown", reason: o.reason };
    case "uncertain":
      return { quiesce: "uncertain", cause: o.cause };
    case "failed":
      return { quiesce: "failed", error: o.error.message };
    default:
      return { quiesce: o.status };
  }
}
