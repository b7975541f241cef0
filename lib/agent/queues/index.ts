// Queue integrations: pg-boss 10 (same PostgreSQL, schema "pgboss") and BullMQ (Redis). Each job is
// a registered operation with a stamp; workers admit at dequeue through the worker guard.
export {
  createPgBoss,
  ensureGuardedQueue,
  enqueuePgBoss,
  guardPgBossWork,
  PGBOSS_PREFIX,
  PGBOSS_SCHEMA,
  type GuardPgBossOptions,
  type PgBossHandler,
} from "./pg-boss";
export {
  enqueueBullMQ,
  guardBullMQWorker,
  redisConnection,
  redisUrl,
  BULLMQ_PREFIX,
  type GuardBullMQOptions,
  type BullMQHandler,
} from "./bullmq";
export { registerJob, retryInput, type EnqueueInput, type Enqueued, type JobData, type ProducerClient } from "./enqueue";
