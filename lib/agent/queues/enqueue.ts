// Producer side, shared by the pg-boss and BullMQ integrations: every job is registered as an
// operation BEFORE it enters the queue (so a kill that commits in between still cancels it), carries
// its stamp in the job data, and names the queue job that holds it (provider_name "pg-boss:<queue>"
// or "bullmq:<queue>", provider_job_id = the job id) so the barrier can cancel it in the queue itself.
import { newId } from "../../platform/ids";
import type { RegisterOperationBody } from "../../schemas/operations";
import type { JobStamp, RunAuthority } from "../sdk/worker/stamp";

/** What the producer needs from the SDK client (QuiesceClient satisfies it). */
export interface ProducerClient {
  registerOperation(body: RegisterOperationBody): Promise<{ operationId: string; state: string }>;
}

export interface EnqueueInput<T> {
  authority: RunAuthority;
  /** What the job will do, recorded on the operation (e.g. "db.compatibility_check"). */
  tool: string;
  payload: T;
  /** Delay before the job may start: registers kind "scheduled" with notBefore. */
  delayMs?: number;
  /** Deadline after which the gate denies operation_expired. */
  expiresAt?: Date;
  /** Supplied for idempotent producers; generated otherwise. */
  operationId?: string;
  /** Set by the guard for its own retries: kind "retry". */
  retry?: { of: string; attempt: number };
}

export interface JobData<T> {
  quiesce: JobStamp;
  tool: string;
  payload: T;
}
export interface Enqueued {
  operationId: string;
  jobId: string;
  providerName: string;
  stamp: JobStamp;
}

export async function registerJob<T>(
  client: ProducerClient,
  providerName: string,
  input: EnqueueInput<T>,
  makeJobId: (operationId: string) => string,
): Promise<{ data: JobData<T>; enqueued: Enqueued; notBefore?: Date }> {
  const operationId = input.operationId ?? newId("op");
  const jobId = makeJobId(operationId);
  const delay = Math.max(0, input.delayMs ?? 0);
  const notBefore = delay > 0 ? new Date(Date.now() + delay) : undefined;
  const kind: RegisterOperationBody["kind"] = input.retry ? "retry" : delay > 0 ? "scheduled" : "queued";
  await client.registerOperation({
    runId: input.authority.runId,
    leaseId: input.authority.leaseId,
    epoch: input.authority.epoch,
    operationId,
    kind,
    tool: input.tool,
    notBefore: notBefore?.toISOString(),
    expiresAt: input.expiresAt?.toISOString(),
    providerName,
    providerJobId: jobId,
  });
  const stamp: JobStamp = {
    runId: input.authority.runId,
    leaseId: input.authority.leaseId,
    epoch: input.authority.epoch,
    operationId,
    expiresAt: input.expiresAt?.toISOString() ?? null,
    ...(input.retry ? { attempt: input.retry.attempt, retryOf: input.retry.of } : {}),
  };
  return {
    data: { quiesce: stamp, tool: input.tool, payload: input.payload },
    enqueued: { operationId, jobId, providerName, stamp },
    notBefore,
  };
}

/** A retry is new work under the ORIGINAL authority (same lease and epoch): a kill still stops it. */
export function retryInput<T>(stamp: JobStamp, tool: string, payload: T, delayMs: number): EnqueueInput<T> {
  const attempt = (stamp.attempt ?? 0) + 1;
  const base = stamp.retryOf ?? stamp.operationId;
  return {
    authority: { runId: stamp.runId, leaseId: stamp.leaseId, epoch: stamp.epoch },
    tool,
    payload,
    delayMs,
    expiresAt: stamp.expiresAt ? new Date(stamp.expiresAt) : undefined,
    operationId: `${base}.r${attempt}`,
    retry: { of: base, attempt },
  };
}
