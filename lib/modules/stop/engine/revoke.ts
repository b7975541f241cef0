// revoking → settling (docs/architecture.md#the-cancellation-barrier): the kill's second step (queued work
// cancelled, lib/modules/stop/kill.ts cancelQueuedWork) must have committed; then the jobs already sitting
// in real queues (pg-boss / BullMQ) are cancelled there too (docs/architecture.md#integrations-fail-closed):
// the gate would deny them at dequeue anyway, but a cancelled job never wakes a worker. Best effort and
// idempotent: the kill's after-commit step and this step both do it (a crash between loses nothing).
import "server-only";
import { prisma } from "../../../platform/db/prisma";
import { sql, toQuery } from "../../../platform/db/sql";
import type { Principal } from "../../../platform/auth/principal";
import { cancelQueueJobs, isQueueProviderSql, type QueueJobRef } from "../queue-jobs";
import { system } from "./shared";

/** Jobs in real queues whose operations these barriers' subtrees cancelled, cancelled there; how many were. */
export async function cancelBarrierQueueJobs(p: Principal, barrierIds: string[]): Promise<number> {
  const jobs = await queueJobsOfBarriers(p, barrierIds);
  if (jobs.length === 0) return 0;
  const results = await cancelQueueJobs(jobs);
  return results.reduce((n, r) => n + r.cancelled, 0);
}

/** Jobs in real queues (pg-boss / bullmq) whose operations these barriers' subtrees cancelled. */
export async function queueJobsOfBarriers(p: Principal, barrierIds: string[]): Promise<QueueJobRef[]> {
  system(p);
  const { text, values } = toQuery(
    sql`SELECT DISTINCT o.provider_name AS "providerName", o.provider_job_id AS "providerJobId"
          FROM barriers b JOIN runs r ON r.id = b.run_id
          JOIN runs c ON c.root_run_id = r.root_run_id AND b.run_id = ANY (c.path)
          JOIN operations o ON o.run_id = c.id
         WHERE b.id = ANY (${barrierIds}::text[]) AND o.state = 'cancelled_not_started' AND o.provider_job_id IS NOT NULL
           AND ${isQueueProviderSql(sql.raw("o.provider_name"))}`,
  );
  return prisma().$queryRawUnsafe<QueueJobRef[]>(text, ...values);
}

/** revoking → settling for the barriers whose queued work is cancelled and that are still ours: the ones moved. */
export async function enterSettling(p: Principal, barrierIds: string[], workerId: string): Promise<string[]> {
  system(p);
  const rows = await prisma().$queryRawUnsafe<{ id: string }[]>(
    // queued_cancelled_at: the kill's second step (queued work cancelled) must have committed first.
    `UPDATE barriers SET phase = 'settling'
      WHERE id = ANY ($1::text[]) AND phase = 'revoking' AND claimed_by = $2 AND queued_cancelled_at IS NOT NULL RETURNING id`,
    barrierIds,
    workerId,
  );
  return rows.map((r) => r.id);
}
