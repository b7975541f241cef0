// The stop receipt (docs/architecture.md#the-stop-receipt, docs/architecture.md#barriers): a pure builder over facts
// the data layer loaded, the
// decision rule, canonical JSON + sha256 digest, and the YAML rendering. Field names are the
// article's; extra fields extend it (settlements, late requests, version chain).
import { stringify as toYamlText } from "yaml";
import { digestOf } from "./canonical";
import type { SettledState } from "./types";

export interface ReceiptCompletion { pending: number; unknown: number; activeLeases: number }

/** stopped_and_quiet only when pending = 0, unknown = 0 and active leases = 0 (the completion rule). */
export function decideReceipt(c: ReceiptCompletion): "stopped_and_quiet" | "stop_incomplete" {
  return c.pending === 0 && c.unknown === 0 && c.activeLeases === 0 ? "stopped_and_quiet" : "stop_incomplete";
}

export interface ReceiptSettlementFact {
  operationId: string;
  tool: string;
  providerName: string | null;
  providerJob: string | null;
  stateAtBarrier: string;
  cancelRequestedAt: Date | null;
  providerResponse: string | null;
  effectExpected: string | null;
  effectObserved: string | null;
  effectCheckedAt: Date | null;
  settledState: SettledState | null;
  settledAt: Date | null;
  settledReason: string | null;
}

export interface ReceiptFacts {
  barrierId: string;
  runId: string;
  version: number;
  previousDigest: string | null;
  requestedAt: Date;
  requestedBy: string;
  reason: string;
  rootLease: "revoked" | "active" | "none";
  descendantLeasesRevoked: number;
  activeLeases: number;
  currentEpoch: number;
  queuedCancelled: number;
  scheduledCancelled: number;
  retriesCancelled: number;
  settlements: ReceiptSettlementFact[];
  reconciliations: { operationId: string; assignee: string | null; status: string; cause: string | null; resolution: string | null }[];
  effectReceipts: { operationId: string; providerOperationId: string | null; committedAt: Date; rollbackOwner: string | null; source: string; detail: unknown }[];
  observed: { meaning: string; at: Date } | null;
  lateRequestsDenied: number;
  quietPeriodSeconds: number;
  verifiedAt: Date;
}

const iso = (d: Date | null) => (d ? d.toISOString() : null);

export function buildReceipt(f: ReceiptFacts) {
  const count = (s: SettledState) => f.settlements.filter((x) => x.settledState === s).length;
  const pending = f.settlements.filter((x) => x.settledState === null).length;
  const unknown = count("unknown");
  const decision = decideReceipt({ pending, unknown, activeLeases: f.activeLeases });
  const settledTimes = f.settlements.map((s) => s.settledAt?.getTime() ?? 0).filter((t) => t > 0);
  const body = {
    barrier_id: f.barrierId,
    run_id: f.runId,
    version: f.version,
    previous_digest: f.previousDigest,
    requested_at: f.requestedAt.toISOString(),
    requested_by: f.requestedBy,
    reason: f.reason,
    authority: {
      root_lease: f.rootLease,
      descendant_leases_revoked: f.descendantLeasesRevoked,
      active_leases: f.activeLeases,
      current_epoch: f.currentEpoch,
    },
    work: {
      queued_cancelled: f.queuedCancelled,
      in_flight_settled: f.settlements.filter((s) => s.settledState !== null && s.settledState !== "unknown").length,
      in_flight_pending: pending,
      scheduled_retries_cancelled: f.scheduledCancelled + f.retriesCancelled,
    },
    effects: {
      completed_and_verified: count("completed_and_verified"),
      cancelled_without_effect: count("cancelled_without_effect"),
      unknown,
    },
    in_flight: f.settlements.map((s) => ({
      operation_id: s.operationId,
      tool: s.tool,
      provider: s.providerName,
      provider_job: s.providerJob,
      state_at_barrier: s.stateAtBarrier,
      cancellation: { requested_at: iso(s.cancelRequestedAt), provider_response: s.providerResponse },
      effect_check: { expected: s.effectExpected, observed: s.effectObserved, checked_at: iso(s.effectCheckedAt) },
      settled_state: s.settledState ?? "pending",
      settled_reason: s.settledReason,
    })),
    observed_by_target: f.observed ? { meaning: f.observed.meaning, at: f.observed.at.toISOString() } : "uncertain",
    late_requests_denied: f.lateRequestsDenied,
    last_settled_at: settledTimes.length ? new Date(Math.max(...settledTimes)).toISOString() : null,
    quiet_period_seconds: f.quietPeriodSeconds,
    verified_at: f.verifiedAt.toISOString(),
    decision,
    reconciliation: f.reconciliations.map((r) => ({
      operation_id: r.operationId,
      assignee: r.assignee ?? "unassigned",
      status: r.status,
      cause: r.cause,
      resolution: r.resolution,
    })),
    effect_receipts: f.effectReceipts.map((e) => ({
      operation_id: e.operationId,
      provider_operation_id: e.providerOperationId,
      committed_at: e.committedAt.toISOString(),
      rollback_owner: e.rollbackOwner ?? "unassigned",
      source: e.source,
      detail: e.detail ?? null,
    })),
  };
  const { canonical, digest } = digestOf(body);
  return { body: { ...body, digest }, canonical, digest, decision };
}

export type StopReceiptBody = ReturnType<typeof buildReceipt>["body"];

/** Recomputes the digest of a receipt body (as served) and compares it with the one it carries. */
export function verifyReceiptBody(body: Record<string, unknown>): { ok: boolean; digest: unknown; recomputed: string } {
  const { digest } = digestOf(body);
  return { ok: typeof body.digest === "string" && body.digest === digest, digest: body.digest, recomputed: digest };
}

/**
 * The reading order of a receipt: the article's field order (docs/architecture.md#the-stop-receipt), then ours. The digest is
 * over sorted canonical JSON, so order is presentation only — but PostgreSQL's jsonb stores keys in its
 * own order, so every body read back is put in this order before a person or a YAML file sees it.
 */
const KEY_ORDER = [
  "barrier_id", "run_id", "version", "previous_digest", "requested_at", "requested_by", "reason",
  "authority", "root_lease", "descendant_leases_revoked", "active_leases", "current_epoch",
  "work", "queued_cancelled", "in_flight_settled", "in_flight_pending", "scheduled_retries_cancelled",
  "effects", "completed_and_verified", "cancelled_without_effect", "unknown",
  "in_flight", "operation_id", "tool", "provider", "provider_job", "state_at_barrier", "cancellation", "requested_at",
  "provider_response", "effect_check", "expected", "observed", "checked_at", "settled_state", "settled_reason",
  "observed_by_target", "meaning", "at", "late_requests_denied", "last_settled_at", "quiet_period_seconds",
  "verified_at", "decision", "reconciliation", "assignee", "status", "cause", "resolution",
  "effect_receipts", "provider_operation_id", "committed_at", "rollback_owner", "source", "detail", "digest",
];
const rank = new Map(KEY_ORDER.map((k, i) => [k, i] as const));

export function inReadingOrder<T>(value: T): T {
  if (Array.isArray(value)) return value.map(inReadingOrder) as T;
  if (value === null || typeof value !== "object" || value instanceof Date) return value;
  const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) =>
    (rank.get(a) ?? KEY_ORDER.length) - (rank.get(b) ?? KEY_ORDER.length) || a.localeCompare(b));
  return Object.fromEntries(entries.map(([k, v]) => [k, k === "detail" ? v : inReadingOrder(v)])) as T;
}

export function receiptYaml(body: Record<string, unknown>): string {
  return toYamlText({ stop_receipt: inReadingOrder(body) }, { lineWidth: 0 });
}
