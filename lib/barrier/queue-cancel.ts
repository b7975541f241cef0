// After the barrier commits, jobs already sitting in real queues (pg-boss / BullMQ) are cancelled
// there too (DESIGN.md §9): the gate would deny them at dequeue anyway, but a cancelled job never
// wakes a worker. Best effort and idempotent: the kill's after-commit step and the engine's
// revoking step both call it. lib/queues/cancel.ts is the workers' module.
import { queueJobsOfBarrier } from "../dal/barrier-engine";
import type { Principal } from "../dal/principal";

export type QueueJob = { providerName: string; providerJobId: string };
type CancelQueueJobs = (ops: QueueJob[]) => Promise<unknown>;

async function loadCancel(): Promise<CancelQueueJobs | null> {
  try {
    // A variable specifier: the queue module is optional for the barrier (no queue, nothing to cancel).
    const spec = "../queues/cancel";
    const mod = (await import(/* webpackIgnore: true */ /* @vite-ignore */ spec)) as { cancelQueueJobs?: CancelQueueJobs };
    return mod.cancelQueueJobs ?? null;
  } catch {
    return null;
  }
}

export async function cancelQueueJobsNow(jobs: QueueJob[]): Promise<number> {
  if (jobs.length === 0) return 0;
  const cancel = await loadCancel();
  if (!cancel) return 0;
  await cancel(jobs);
  return jobs.length;
}

export async function cancelBarrierQueueJobs(p: Principal, barrierId: string): Promise<number> {
  return cancelQueueJobsNow(await queueJobsOfBarrier(p, barrierId));
}
