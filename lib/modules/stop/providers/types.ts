// The provider interface of the cancellation barrier (docs/architecture.md#the-cancellation-barrier): Quiesce asks a provider to cancel
// an in-flight operation, then asks the authoritative system whether the effect is there.
// Neither answer is a settlement on its own; lib/control/settlement decides from both.
import "server-only";
import type { EffectObservation, ProviderResponse } from "../../../control/settlement";

/** A providers row, as the barrier engine reads it (per team, addressed by operations.provider_name). */
export interface ProviderConfig {
  name: string;
  /** "http" (generic), "simulated" (the demo deployment provider; same wire protocol), "mcp" or "a2a" (docs/design/mcp-tasks.md). */
  kind: string;
  cancelUrl: string | null;
  statusUrl: string | null;
  /** Recovery: POST here asks the provider to undo a completed effect; null means a person records it. */
  compensateUrl?: string | null;
  timeoutMs: number;
  settleDeadlineMs: number;
  quietPeriodSeconds: number;
  rollbackOwner: string | null;
  /** Kinds "mcp" / "a2a": where the task is held (an http(s) URL, or a stdio command as a JSON array). */
  endpoint?: string | null;
}

/** What the provider needs to find the work: its own job id, and ours. */
export interface ProviderOperationRef {
  operationId: string;
  providerJobId: string | null;
  runId: string;
  tool: string;
}

export interface CancelAnswer {
  response: ProviderResponse;
  detail?: unknown;
}

export interface EffectAnswer {
  effect: EffectObservation;
  /** The job is terminal (cancelled / failed / committed): this answer cannot change any more. */
  final: boolean;
  providerOperationId?: string | null;
  committedAt?: string | null;
  detail?: unknown;
}

export interface Provider {
  readonly config: ProviderConfig;
  requestCancel(op: ProviderOperationRef): Promise<CancelAnswer>;
  checkEffect(op: ProviderOperationRef): Promise<EffectAnswer>;
  /** Asks the provider to undo the effect; the same idempotency key never undoes twice. Not a proof: checkEffect is. */
  requestCompensation(op: ProviderOperationRef, idempotencyKey: string): Promise<CancelAnswer>;
}
