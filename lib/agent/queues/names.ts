// Where Quiesce's queue jobs live, apart from the queue adapters so that code which only needs to
// address the queues (the kill's post-commit cancellation, lib/modules/stop/queue-jobs.ts) does not load the
// worker guards with them.
import { setting } from "../../platform/config";

/** Provider-name prefix of operations whose jobs sit in pg-boss (`pg-boss:<queue>`). */
export const PGBOSS_PREFIX = "pg-boss:";
/** The schema pg-boss keeps its tables in, on Quiesce's database. */
export const PGBOSS_SCHEMA = "pgboss";
/** Provider-name prefix of operations whose jobs sit in BullMQ (`bullmq:<queue>`). */
export const BULLMQ_PREFIX = "bullmq:";

export function redisUrl(): string {
  return setting("REDIS_URL");
}
