// After the barrier commits, jobs already sitting in real queues (pg-boss / BullMQ) are cancelled
// there too (docs/architecture.md#integrations-fail-closed): the gate would deny them at dequeue anyway, but a cancelled job never
// wakes a worker. Best effort and idempotent: the kill's after-commit step and the engine's
// revoking step both call it (a crash between commit and the call loses nothing).
import { cancelQueueJobs } from "../queues/cancel";
import { queueJobsOfBarrier } from "../dal/barrier-engine";
import type { Principal } from "../dal/principal";

export type QueueJob = { providerName: string; providerJobId: string };

export async function cancelQueueJobsNow(jobs: QueueJob[]): Promise<number> {
  if (jobs.length === 0) return 0;
  const results = await cancelQueueJobs(jobs);
  return results.reduce((n, r) => n + r.cancelled, 0);
}

export async function cancelBarrierQueueJobs(p: Principal, barrierId: string): Promise<number> {
  return cancelQueueJobsNow(await queueJobsOfBarrier(p, barrierId));
}
