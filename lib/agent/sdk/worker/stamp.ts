// The stamp every queued job carries (docs/ideas.md#barriers: "every queued message should carry at least run_id,
// lease, revocation_epoch, operation_id, and an expiry"). The worker checks it at dequeue, against
// current authority — an approval given at enqueue time is not a property of the message.
import { z } from "zod";

export const JobStampSchema = z.strictObject({
  runId: z.string().min(1).max(200),
  leaseId: z.string().min(1).max(200),
  epoch: z.number().int().min(0),
  operationId: z.string().min(1).max(200),
  /** ISO 8601; after it the gate denies operation_expired. */
  expiresAt: z.iso.datetime({ offset: true }).nullable().optional(),
  /** 0 for the first attempt; guard-managed retries count up (each retry is its own operation). */
  attempt: z.number().int().min(0).optional(),
  /** The operation this one retries, for the evidence trail. */
  retryOf: z.string().min(1).max(200).optional(),
});
export type JobStamp = z.infer<typeof JobStampSchema>;

/** Authority handed to a producer: the run's lease and epoch as the control plane issued them. */
export interface RunAuthority {
  runId: string;
  leaseId: string;
  epoch: number;
}

/** Reads the stamp from a job's data; a job without a valid stamp has no authority at all. */
export function readStamp(data: unknown): JobStamp | null {
  const candidate = (data as { quiesce?: unknown } | null)?.quiesce;
  const parsed = JobStampSchema.safeParse(candidate);
  return parsed.success ? parsed.data : null;
}
