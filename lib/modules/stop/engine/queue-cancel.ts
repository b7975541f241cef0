// After the barrier commits, jobs already sitting in real queues (pg-boss / BullMQ) are cancelled
// there too (docs/architecture.md#integrations-fail-closed): the gate would deny them at dequeue anyway, but a cancelled job never
// wakes a worker. Best effort and idempotent: the kill's after-commit step and the engine's
// revoking step both call it (a crash between commit and the call loses nothing).
import "server-only";
import { cancelQueueJobs } from "../queue-jobs";
import { queueJobsOfBarrier } from "./steps";
import type { Principal } from "../../../platform/auth/principal";

export type QueueJob = { providerName: string; providerJobId: string };

export async function cancelQueueJobsNow(jobs: QueueJob[]): Promise<number> {
  if (jobs.length === 0) return 0;
  const results = await cancelQueueJobs(jobs);
  return results.reduce((n, r) => n + r.cancelled, 0);
}

export async function cancelBarrierQueueJobs(p: Principal, barrierId: string): Promise<number> {
  return cancelQueueJobsNow(await queueJobsOfBarrier(p, barrierId));
}
