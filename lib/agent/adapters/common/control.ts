// What every adapter shares about the control plane: one SDK client, how a gate reason reads to a
// person, and which reasons mean "this run's authority is gone for good" (stop the harness, not just
// the call). Adapters never decide anything themselves: they map the gate's answer onto a protocol.
import { QuiesceClient } from "../../sdk/client";
import { QuiesceApiError, QuiesceConfigError, QuiesceUnreachableError } from "../../sdk/errors";
import type { AdapterConfig } from "./config";

export function makeClient(
  cfg: AdapterConfig,
  timeoutMs: number,
  opts: { fetch?: typeof fetch; streamFetch?: typeof fetch } = {},
): QuiesceClient {
  return new QuiesceClient({
    url: cfg.url,
    apiKey: cfg.apiKey,
    timeoutMs,
    ...(opts.fetch ? { fetch: opts.fetch } : {}),
    ...(opts.streamFetch ? { streamFetch: opts.streamFetch } : {}),
  });
}

/** Reasons after which nothing this run does will ever be allowed again (kill / revocation). */
export const REVOKED_REASONS: ReadonlySet<string> = new Set(["killed", "parent_revoked", "lease_revoked", "stale_epoch"]);

const REASON_TEXT: Record<string, string> = {
  missing_state: "the control plane has no record of this run (fail closed)",
  killed: "the run was killed by an operator",
  parent_revoked: "a parent run was killed or its authority revoked",
  lease_revoked: "the run's lease was revoked",
  lease_expired: "the run's lease expired",
  stale_epoch: "the run's authority was revoked (stale epoch)",
  operation_expired: "the operation expired",
  breaker_open: "the run's circuit breaker is open",
  paused: "paused by operator, retry later",
  already_applied: "this operation was already applied; not repeating it",
  finished: "the run has finished",
  control_unavailable: "the control plane could not decide in time (fail closed)",
  policy_denied: "the team's policy does not allow this call",
  awaiting_approval: "this call waits for a person's approval",
  approval_denied: "a person denied this call",
  approval_expired: "nobody approved this call before its approval expired",
  budget_exhausted: "a spending budget is exhausted",
};

export function reasonText(reason: string): string {
  return REASON_TEXT[reason] ?? reason;
}

/** A gate answer in words, naming the approval or the budget it is about. */
export function answerText(a: { reason: string; approvalId?: string; budget?: string }): string {
  const about = [a.approvalId ? `approval ${a.approvalId}` : "", a.budget ? `budget "${a.budget}"` : ""].filter(Boolean).join(", ");
  return about ? `${reasonText(a.reason)} (${about})` : reasonText(a.reason);
}

/** One line for stderr / tool errors; never includes the API key. */
export function describeError(err: unknown): string {
  if (err instanceof QuiesceApiError) return `control plane refused (${err.status} ${err.code}): ${err.message}`;
  if (err instanceof QuiesceUnreachableError) return err.message;
  if (err instanceof QuiesceConfigError) return `configuration: ${err.message}`;
  if (err instanceof Error) return err.message;
  return String(err);
}

export { QuiesceApiError, QuiesceUnreachableError, QuiesceClient };
