// The stop receipt: built from the evidence model (never from a second set of counts), serialized once
// (RFC 8785 canonical JSON for the digest; YAML from the same object) and verified by ONE function.
// The API, the console, the CLI and the downloads all call these. Pure.
import { stringify as toYamlText } from "yaml";
import { canonicalJson, digestOf, sha256Hex } from "../canonical";
import { deriveEvidence, type Evidence, type EvidenceFacts, type ReceiptDecision } from "./model";
import { environmentMeaning, UNSUPERVISED_SENTENCE } from "./environment";

const iso = (d: Date | null | undefined) => (d ? d.toISOString() : null);

export interface ReceiptIssue {
  version: number;
  previousDigest: string | null;
  verifiedAt: Date;
  /** The team's audit-chain head when the receipt was issued (checked by `quiesce audit verify`). */
  auditHead?: { eventId: string; hash: string; count: number } | null;
}

/** The receipt body for `facts` as of `issue.verifiedAt` (the model's `now` must be that instant). */
export function buildReceipt(facts: EvidenceFacts, issue: ReceiptIssue) {
  const ev: Evidence = deriveEvidence({ ...facts, now: issue.verifiedAt });
  const b = facts.barrier;
  const c = ev.counts;
  const inFlight = ev.operations.filter((o) => o.inFlight);
  const body = {
    ...(issue.auditHead
      ? { audit_head: { event_id: issue.auditHead.eventId, hash: issue.auditHead.hash, count: issue.auditHead.count } }
      : {}),
    barrier_id: b.id,
    run_id: b.runId,
    version: issue.version,
    previous_digest: issue.previousDigest,
    requested_at: b.requestedAt.toISOString(),
    requested_by: b.requestedBy,
    reason: b.reason,
    authority: {
      root_lease: facts.leases.rootLease,
      descendant_leases_revoked: facts.leases.descendantLeasesRevoked,
      active_leases: c.activeLeases,
      current_epoch: facts.currentEpoch,
      runs_killed: c.runsKilled,
      runs_in_subtree: c.runs,
    },
    work: {
      queued_cancelled: b.queuedCancelled,
      in_flight_settled: inFlight.length - c.pending - c.unknown,
      in_flight_pending: c.pending,
      scheduled_retries_cancelled: b.scheduledCancelled + b.retriesCancelled,
    },
    effects: {
      completed_and_verified: c.completedAndVerified,
      cancelled_without_effect: c.cancelledWithoutEffect,
      unknown: c.unknown,
      settled_by_provider: c.settledByProvider,
      reported_by_executor: c.settledByExecutor,
      reconciled_by_person: c.reconciledByPerson,
    },
    in_flight: inFlight.map(({ op, outcome, settledBy, settledAt }) => ({
      operation_id: op.operationId,
      run_id: op.runId,
      tool: op.tool,
      provider: op.providerName,
      provider_job: op.providerJob,
      state_at_barrier: op.settlement?.stateAtBarrier ?? op.state,
      cancellation: { requested_at: iso(op.settlement?.cancelRequestedAt), provider_response: op.settlement?.providerResponse ?? null },
      effect_check: {
        expected: op.settlement?.effectExpected ?? null,
        observed: op.settlement?.effectObserved ?? null,
        checked_at: iso(op.settlement?.effectCheckedAt),
      },
      settled_state:
        outcome === "pending"
          ? "pending"
          : outcome === "unknown"
            ? "unknown"
            : outcome === "effect_present"
              ? "completed_and_verified"
              : "cancelled_without_effect",
      settled_by: settledBy,
      settled_at: iso(settledAt),
      settled_reason: op.settlement?.settledReason ?? null,
    })),
    observed_by_target: ev.observedMeaning
      ? { meaning: ev.observedMeaning, at: ev.ladder.find((r) => r.id === "observed_by_target")!.at }
      : "uncertain",
    observed_runs: facts.runs.map((r) => ({ run_id: r.id, meaning: r.acknowledgment?.meaning ?? null, at: iso(r.acknowledgment?.at) })),
    late_requests_denied: c.lateRequestsDenied,
    last_settled_at: iso(ev.lastSettledAt),
    quiet_period_seconds: b.quietPeriodSeconds ?? 0,
    quiet_until: iso(b.quietUntil),
    verified_at: issue.verifiedAt.toISOString(),
    decision: ev.decision,
    reconciliation: ev.operations
      .filter((o) => o.op.reconciliation)
      .map(({ op }) => {
        const r = op.reconciliation!;
        return {
          operation_id: op.operationId,
          assignee: r.assignee ?? "no owner (the team has no admin)",
          assigned_by: r.assignedBy,
          status: r.status,
          cause: r.cause,
          resolution: r.resolution,
        };
      }),
    human_settlements: ev.operations
      .filter((o) => o.settledBy === "person")
      .map(({ op }) => {
        const r = op.reconciliation!;
        return { operation_id: op.operationId, by: r.resolvedBy, at: iso(r.resolvedAt), resolution: r.resolution, evidence: r.evidence };
      }),
    effect_receipts: facts.effectReceipts.map((e) => ({
      operation_id: e.operationId,
      provider_operation_id: e.providerOperationId,
      committed_at: e.committedAt.toISOString(),
      rollback_owner: e.rollbackOwner ?? "no rollback owner named",
      source: e.source,
      detail: e.detail ?? null,
    })),
    // What executors said after the stop: evidence of a claim, never of the effect (docs/evidence.md#claims).
    claims_not_verified: (facts.claims ?? []).map((c) => ({
      operation_id: c.operationId,
      outcome: c.outcome,
      provider_operation_id: c.providerOperationId,
      reported_by: c.reportedBy,
      claimed_at: c.claimedAt.toISOString(),
    })),
    // What was done about each completed effect, and who proved it (docs/evidence.md#recovery).
    recovery: (facts.recoveries ?? []).map((r) => ({
      operation_id: r.operationId,
      state: r.state,
      rollback_owner: r.rollbackOwner ?? null,
      owner: r.assignee ?? null,
      settled_by: r.settledBy,
      by: r.by,
      at: r.at,
      note: r.note ?? null,
      evidence: r.evidence ?? null,
      verified_at: r.verifiedAt ?? null,
      verified_effect: r.verifiedEffect ?? null,
    })),
    // What each budget reservation of the subtree became: given back by the stop when the work never started,
    // kept while its outcome is unknown (the spend may have happened) — docs/policies.md#budgets.
    ...((facts.budgetReservations ?? []).length > 0
      ? {
          budget_reservations: facts.budgetReservations!.map((r) => ({
            operation_id: r.operationId,
            budget: r.budget,
            unit: r.unit,
            amount: r.amount,
            actual: r.actual,
            state: r.state,
            release_cause: r.releaseCause,
          })),
        }
      : {}),
    // Per run, what its supervisor proved about its processes — and nothing for a run without one
    // (docs/evidence.md#the-environment).
    environment: environmentSection(facts, ev),
    summary: ev.sentences,
  };
  const { canonical, digest } = digestOf(body);
  return { body: { ...body, digest }, canonical, digest, decision: ev.decision as ReceiptDecision, evidence: ev };
}

export type StopReceiptBody = ReturnType<typeof buildReceipt>["body"];

/** The receipt's environment section: one entry per run of the subtree, claiming only what its supervisor reported. */
function environmentSection(facts: EvidenceFacts, ev: Evidence) {
  const unknown = new Set(ev.environment.unknownRuns.map((u) => u.runId));
  const line = new Map(ev.environment.sentences.map((x) => [x.slice(0, x.indexOf(":")), x.slice(x.indexOf(":") + 2)]));
  return facts.runs.map((r) => {
    const env = r.environment;
    if (!env) return { run_id: r.id, supervised: false, statement: UNSUPERVISED_SENTENCE };
    const e = env.evidence;
    const byPerson = !!env.resolvedBy && !(e && environmentMeaning(e) === "process_terminated");
    return {
      run_id: r.id,
      supervised: true,
      status:
        e && environmentMeaning(e) === "process_terminated"
          ? "terminated"
          : byPerson
            ? "verified_by_person"
            : unknown.has(r.id)
              ? "unknown"
              : "pending",
      mechanism: e?.mechanism ?? env.mechanism,
      weakest: e?.weakest ?? env.weakest,
      container: e?.container ?? null,
      stop_started_at: e?.stopStartedAt ?? null,
      emptied_at: e?.emptyAt ?? null,
      reported_at: iso(env.evidenceAt),
      reattached: e?.reattached ?? false,
      processes: (e?.processes ?? []).map((p) => ({
        pid: p.pid,
        command: p.cmdline,
        ended: p.ended,
        ended_at: p.endedAt,
        exit_code: p.exitCode ?? null,
        signal: p.signal ?? null,
      })),
      could_not_kill: e?.survivors ?? [],
      unknown_since: iso(env.unknownSince),
      owner: env.owner,
      resolved_by: env.resolvedBy ?? null,
      resolved_at: iso(env.resolvedAt),
      resolution_evidence: env.resolutionEvidence ?? null,
      statement: line.get(r.id) ?? "",
    };
  });
}

export interface ReceiptCheck {
  ok: boolean;
  recomputed: string;
  detail: string;
}

/**
 * THE verifier: the body (as served, without `digest`) canonicalizes to the stored text, the text
 * hashes to the recorded digest, and the body names that digest. Give only a body to check a receipt
 * someone handed you (then the body's own `digest` is the recorded one).
 */
export function verifyReceipt(r: { body: Record<string, unknown>; canonical?: string; digest?: string }): ReceiptCheck {
  const recorded = r.digest ?? (typeof r.body.digest === "string" ? r.body.digest : "");
  let canonical: string;
  try {
    canonical = digestOf(r.body).canonical;
  } catch (e) {
    return { ok: false, recomputed: "", detail: `the body is not canonicalizable: ${(e as Error).message}` };
  }
  const recomputed = sha256Hex(canonical);
  if (recomputed !== recorded)
    return { ok: false, recomputed, detail: "the digest recomputed from the receipt body does not match the recorded digest" };
  if (r.canonical !== undefined && r.canonical !== canonical)
    return { ok: false, recomputed, detail: "the stored canonical text does not match the receipt body" };
  if (r.body.digest !== recorded) return { ok: false, recomputed, detail: "the body names a different digest" };
  return { ok: true, recomputed, detail: "sha256 of the RFC 8785 canonical body matches the recorded digest" };
}

/**
 * The reading order of a receipt: the article's field order, then ours. The digest is over canonical
 * JSON, so order is presentation only — but PostgreSQL's jsonb stores keys in its own order, so every
 * body read back is put in this order before a person, a YAML file or an API response sees it.
 */
const KEY_ORDER = [
  "barrier_id",
  "run_id",
  "version",
  "previous_digest",
  "requested_at",
  "requested_by",
  "reason",
  "authority",
  "root_lease",
  "descendant_leases_revoked",
  "active_leases",
  "current_epoch",
  "runs_killed",
  "runs_in_subtree",
  "work",
  "queued_cancelled",
  "in_flight_settled",
  "in_flight_pending",
  "scheduled_retries_cancelled",
  "effects",
  "completed_and_verified",
  "cancelled_without_effect",
  "unknown",
  "settled_by_provider",
  "reported_by_executor",
  "reconciled_by_person",
  "in_flight",
  "operation_id",
  "tool",
  "provider",
  "provider_job",
  "state_at_barrier",
  "cancellation",
  "requested_at",
  "provider_response",
  "effect_check",
  "expected",
  "observed",
  "checked_at",
  "settled_state",
  "settled_by",
  "settled_at",
  "settled_reason",
  "observed_by_target",
  "observed_runs",
  "meaning",
  "at",
  "late_requests_denied",
  "last_settled_at",
  "quiet_period_seconds",
  "quiet_until",
  "verified_at",
  "decision",
  "reconciliation",
  "assignee",
  "assigned_by",
  "status",
  "cause",
  "resolution",
  "human_settlements",
  "by",
  "evidence",
  "effect_receipts",
  "provider_operation_id",
  "committed_at",
  "rollback_owner",
  "source",
  "detail",
  "recovery",
  "budget_reservations",
  "budget",
  "unit",
  "amount",
  "actual",
  "release_cause",
  "owner",
  "note",
  "verified_effect",
  "environment",
  "supervised",
  "mechanism",
  "weakest",
  "container",
  "stop_started_at",
  "emptied_at",
  "reported_at",
  "reattached",
  "processes",
  "pid",
  "command",
  "ended",
  "ended_at",
  "exit_code",
  "signal",
  "could_not_kill",
  "unknown_since",
  "resolved_by",
  "resolved_at",
  "resolution_evidence",
  "statement",
  "summary",
  "digest",
];
const rank = new Map(KEY_ORDER.map((k, i) => [k, i] as const));

export function inReadingOrder<T>(value: T): T {
  if (Array.isArray(value)) return value.map(inReadingOrder) as T;
  if (value === null || typeof value !== "object" || value instanceof Date) return value;
  const entries = Object.entries(value as Record<string, unknown>).sort(
    ([a], [b]) => (rank.get(a) ?? KEY_ORDER.length) - (rank.get(b) ?? KEY_ORDER.length) || (a < b ? -1 : a > b ? 1 : 0),
  );
  return Object.fromEntries(entries.map(([k, v]) => [k, k === "detail" ? v : inReadingOrder(v)])) as T;
}

/** The one serializer: JSON and YAML texts of a receipt body, both from the same ordered object. */
export function serializeReceipt(body: Record<string, unknown>, format: "json" | "yaml"): string {
  const ordered = inReadingOrder(body);
  return format === "yaml" ? toYamlText({ stop_receipt: ordered }, { lineWidth: 0 }) : `${JSON.stringify(ordered, null, 2)}\n`;
}

/** The signed form as served and downloaded: the DSSE envelope as stored at issue time, pretty-printed
 *  (verify it with `quiesce verify`). Beside the body's serializer so the API, the console and the
 *  tests send the same bytes. */
export function envelopeText(envelope: unknown): string {
  return `${JSON.stringify(envelope, null, 2)}\n`;
}

export { canonicalJson };
