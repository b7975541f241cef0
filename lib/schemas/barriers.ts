// Wire shapes of the cancellation barrier (docs/architecture.md#, #the-stop-receipt, #the-wire-contract): observed-by-target reports,
// barrier view, stop receipts, reconciliation writes. Shared by route handlers, console actions, SDK, CLI.
import { z } from "zod";
import { OBSERVED_MEANINGS } from "../control/barrier";
import { RECONCILIATION_STATUSES } from "../control/reconciliation";
import { SETTLED_STATES } from "../control/types";
import { registerPath } from "./registry";
import { Id, PG_INT_MAX, requestShape, responseShape } from "./common";

export const ObservedBody = requestShape("ObservedRequest", {
  meaning: z.enum(OBSERVED_MEANINGS),
  evidence: z.record(z.string(), z.unknown()).optional(),
  /** A harness that did not register the run presents one of its leases (docs/security/authorization.md#holders). */
  leaseId: Id.optional(),
});
export type ObservedBody = z.infer<typeof ObservedBody>;

export const ObservedResponse = responseShape("ObservedResponse", {
  barrierId: z.string(),
  runId: z.string(),
  meaning: z.enum(OBSERVED_MEANINGS),
  observedAt: z.string(),
});

const Rung = z.object({
  label: z.string(),
  stopState: z.string().nullable(),
  /** done exactly when the rung's fact holds over the whole subtree (see docs/evidence.md). */
  status: z.enum(["done", "pending", "uncertain"]),
  at: z.string().nullable(),
  detail: z.string(),
  evidence: z.record(z.string(), z.unknown()),
});

const Time = z.string();
const SettledBySchema = z.enum(["provider", "executor", "person"]);
const ResolutionSchema = z.enum(["effect_present", "effect_absent"]);

/**
 * One in-flight operation of a barrier's subtree and how it settled: the read shape of a settlement for
 * the API (`GET /api/v1/barriers/{id}`), the console's barrier page and the CLI (docs/api.md#read-shapes).
 */
export const Settlement = z.object({
  operationId: z.string(),
  runId: z.string(),
  tool: z.string(),
  provider: z.string().nullable(),
  providerJobId: z.string().nullable(),
  barrierId: z.string().nullable(),
  stateAtBarrier: z.string().nullable(),
  cancelRequestedAt: Time.nullable(),
  providerResponse: z.string().nullable(),
  effectExpected: z.string().nullable(),
  effectObserved: z.string().nullable(),
  effectCheckedAt: Time.nullable(),
  outcome: z.enum(["pending", "unknown", "effect_present", "effect_absent", "not_started"]),
  settledState: z.enum(SETTLED_STATES).nullable(),
  settledBy: SettledBySchema.nullable(),
  settledAt: Time.nullable(),
  settledReason: z.string().nullable(),
  /** The operation's reconciliation, as far as the barrier needs it (the whole of it: Reconciliation). */
  reconciliation: z
    .object({
      reconciliationId: z.string(),
      status: z.enum(RECONCILIATION_STATUSES),
      /** the assignee's email */
      assignee: z.string().nullable(),
      assignedBy: z.string().nullable(),
      resolution: ResolutionSchema.nullable(),
      resolvedBy: z.string().nullable(),
      resolvedAt: Time.nullable(),
      evidence: z.string().nullable(),
    })
    .nullable(),
});
export type Settlement = z.infer<typeof Settlement>;

/** One issued version of a barrier's stop receipt (the receipt itself: StopReceiptSchema). */
export const ReceiptRef = z.object({ version: z.number().int(), decision: z.string(), digest: z.string(), verifiedAt: z.string() });
export type ReceiptRef = z.infer<typeof ReceiptRef>;

/**
 * An `unknown` outcome handed to a named person: the read shape of a reconciliation for the console's
 * queue and `quiesce reconcile list` (docs/api.md#read-shapes). `cause` is the uncertain interval's
 * cause; `whyUnknown` the sentence the evidence gives (kept after resolution).
 */
export const Reconciliation = z.object({
  id: z.string(),
  teamId: z.string(),
  barrierId: z.string().nullable(),
  runId: z.string(),
  operationId: z.string(),
  tool: z.string(),
  providerName: z.string().nullable(),
  providerJobId: z.string().nullable(),
  /** The provider's page for this job (its jobUrl template filled), where a person checks the effect; null without one. */
  providerJobUrl: z.string().nullable(),
  cause: z.string().nullable(),
  whyUnknown: z.string().nullable(),
  providerResponse: z.string().nullable(),
  effectExpected: z.string().nullable(),
  status: z.enum(RECONCILIATION_STATUSES),
  assignee: z.object({ userId: z.string(), email: z.string(), name: z.string() }).nullable(),
  assignedBy: z.string().nullable(),
  assignedAt: Time.nullable(),
  resolution: ResolutionSchema.nullable(),
  evidence: z.string().nullable(),
  resolvedAt: Time.nullable(),
  resolvedBy: z.string().nullable(),
  createdAt: Time,
});
export type Reconciliation = z.infer<typeof Reconciliation>;

export const BarrierViewSchema = responseShape("BarrierView", {
  barrierId: z.string(),
  runId: z.string(),
  phase: z.enum(["revoking", "settling", "quiet", "complete"]),
  /** The latest receipt's decision (null before the first). */
  decision: z.enum(["stopped_and_quiet", "stop_incomplete"]).nullable(),
  /** What the completion rule says now, over the whole subtree. */
  currentDecision: z.enum(["stopped_and_quiet", "stop_incomplete"]),
  requestedAt: z.string(),
  requestedBy: z.string(),
  reason: z.string(),
  newEpoch: z.number().int(),
  ladder: z.strictObject({
    cancellation_requested: Rung,
    observed_by_target: Rung,
    new_work_prevented: Rung,
    queued_work_cancelled: Rung,
    execution_quiesced: Rung,
    /** Only when a run of the subtree was supervised (docs/evidence.md#the-environment). */
    environment_terminated: Rung.optional(),
    effects_settled: Rung,
    receipt_issued: Rung,
  }),
  counts: z.record(z.string(), z.number().int().min(0)),
  sentences: z.array(z.string()),
  quietPeriodSeconds: z.number().min(0).nullable(),
  quietUntil: z.string().nullable(),
  completedAt: z.string().nullable(),
  // The document publishes these four fields of a settlement, and lets the rest through (docs/api.md#read-shapes).
  settlements: z.array(Settlement.pick({ operationId: true, runId: true, outcome: true, settledBy: true }).loose()),
  receipts: z.array(ReceiptRef),
});

export const ReceiptQuery = z.object({
  version: z.coerce.number().int().min(1).max(PG_INT_MAX).optional(),
  format: z.enum(["json", "yaml", "dsse"]).optional(),
});

const Count = z.number().int().min(0);
export const StopReceiptSchema = z
  .object({
    audit_head: z.object({ event_id: z.string(), hash: z.string(), count: Count }).optional(),
    barrier_id: z.string(),
    run_id: z.string(),
    version: z.number().int().min(1),
    previous_digest: z.string().nullable(),
    requested_at: z.string(),
    requested_by: z.string(),
    reason: z.string(),
    authority: z.object({
      root_lease: z.enum(["revoked", "active", "none"]),
      descendant_leases_revoked: Count,
      active_leases: Count,
      current_epoch: z.number().int(),
      runs_killed: Count,
      runs_in_subtree: Count,
    }),
    work: z.object({ queued_cancelled: Count, in_flight_settled: Count, in_flight_pending: Count, scheduled_retries_cancelled: Count }),
    effects: z.object({
      completed_and_verified: Count,
      cancelled_without_effect: Count,
      unknown: Count,
      settled_by_provider: Count,
      reported_by_executor: Count,
      reconciled_by_person: Count,
    }),
    in_flight: z.array(
      z
        .object({
          operation_id: z.string(),
          run_id: z.string(),
          tool: z.string(),
          settled_state: z.enum(["pending", "unknown", "completed_and_verified", "cancelled_without_effect"]),
          settled_by: z.enum(["provider", "executor", "person"]).nullable(),
          settled_at: z.string().nullable(),
        })
        .loose(),
    ),
    observed_by_target: z.union([z.literal("uncertain"), z.object({ meaning: z.string(), at: z.string().nullable() })]),
    observed_runs: z.array(z.object({ run_id: z.string(), meaning: z.string().nullable(), at: z.string().nullable() })),
    late_requests_denied: Count,
    last_settled_at: z.string().nullable(),
    quiet_period_seconds: z.number().min(0),
    quiet_until: z.string().nullable(),
    verified_at: z.string(),
    decision: z.enum(["stopped_and_quiet", "stop_incomplete"]),
    reconciliation: z.array(
      z.object({
        operation_id: z.string(),
        assignee: z.string(),
        assigned_by: z.string().nullable(),
        status: z.string(),
        cause: z.string().nullable(),
        resolution: z.string().nullable(),
      }),
    ),
    human_settlements: z.array(
      z.object({
        operation_id: z.string(),
        by: z.string().nullable(),
        at: z.string().nullable(),
        resolution: z.string().nullable(),
        evidence: z.string().nullable(),
      }),
    ),
    effect_receipts: z.array(z.record(z.string(), z.unknown())),
    /** What executors reported after the stop: claims, kept as evidence, that settle nothing. */
    claims_not_verified: z.array(
      z.object({
        operation_id: z.string(),
        outcome: z.string(),
        provider_operation_id: z.string().nullable(),
        reported_by: z.string(),
        claimed_at: z.string(),
      }),
    ),
    /** What was done about each completed effect (absent on receipts issued before recovery existed). */
    recovery: z
      .array(
        z.object({
          operation_id: z.string(),
          state: z.enum(["open", "in_progress", "rolled_back", "accepted", "failed"]),
          rollback_owner: z.string().nullable(),
          owner: z.string().nullable(),
          settled_by: z.enum(["provider", "person"]).nullable(),
          by: z.string().nullable(),
          at: z.string().nullable(),
          note: z.string().nullable(),
          evidence: z.string().nullable(),
          verified_at: z.string().nullable(),
          verified_effect: z.string().nullable(),
        }),
      )
      .optional(),
    /** Per run, what its supervisor proved about its processes (absent on receipts issued before it existed; docs/evidence.md#the-environment). */
    environment: z
      .array(
        z.union([
          z.object({ run_id: z.string(), supervised: z.literal(false), statement: z.string() }).strict(),
          z
            .object({
              run_id: z.string(),
              supervised: z.literal(true),
              status: z.enum(["terminated", "verified_by_person", "unknown", "pending"]),
              mechanism: z.enum(["cgroup2", "cgroup1", "pidns", "pgroup"]),
              weakest: z.boolean(),
              container: z.string().nullable(),
              stop_started_at: z.string().nullable(),
              emptied_at: z.string().nullable(),
              reported_at: z.string().nullable(),
              reattached: z.boolean(),
              processes: z.array(
                z.object({
                  pid: z.number().int(),
                  command: z.string(),
                  ended: z.enum(["exited", "after_sigterm", "after_sigkill", "not_ended"]),
                  ended_at: z.string().nullable(),
                  exit_code: z.number().int().nullable(),
                  signal: z.string().nullable(),
                }),
              ),
              could_not_kill: z.array(z.number().int()),
              unknown_since: z.string().nullable(),
              owner: z.string().nullable(),
              /** A person's check that closed an unknown: who, when, their note. */
              resolved_by: z.string().nullable(),
              resolved_at: z.string().nullable(),
              resolution_evidence: z.string().nullable(),
              statement: z.string(),
            })
            .strict(),
        ]),
      )
      .optional(),
    summary: z.array(z.string()),
    digest: z.string().regex(/^[0-9a-f]{64}$/),
  })
  .strict()
  .meta({ id: "StopReceipt" });
/** The read shape of a stop receipt: the stored body, the same bytes for the API, the console and the CLI. */
export type StopReceipt = z.infer<typeof StopReceiptSchema>;

export const ResolveReconciliationBody = z.strictObject({
  resolution: z.enum(["effect_present", "effect_absent"]),
  evidence: z.union([z.string().trim().min(1, "evidence is required").max(4000), z.record(z.string(), z.unknown())]),
});
export type ResolveReconciliationInput = z.infer<typeof ResolveReconciliationBody>;

registerPath({
  method: "post",
  path: "/api/v1/runs/{runId}/observed",
  operationId: "reportObserved",
  tags: ["barrier"],
  summary: "Report that the target observed the cancellation, with what the acknowledgment means",
  description: "Recorded on the barrier covering the run as the 'observed by target' rung. 409 when no barrier covers the run.",
  callers: "agent, worker and gateway keys",
  body: ObservedBody,
  responses: { 200: { description: "recorded", schema: ObservedResponse } },
  errors: [400, 403, 404, 409],
});
registerPath({
  method: "get",
  path: "/api/v1/barriers/{barrierId}",
  operationId: "getBarrier",
  tags: ["barrier"],
  summary: "A barrier: phase, the stop ladder rung by rung, counts, settlements and receipt versions",
  responses: { 200: { description: "barrier", schema: BarrierViewSchema } },
  errors: [404],
});
registerPath({
  method: "get",
  path: "/api/v1/barriers/{barrierId}/receipt",
  operationId: "getReceipt",
  tags: ["barrier"],
  summary: "The stop receipt (latest version, or ?version=n); YAML with ?format=yaml or Accept: application/yaml",
  description:
    "404 until the barrier issued its first receipt. `digest` is sha256 over the RFC 8785 canonical JSON of the body without `digest`; `previous_digest` chains versions.",
  query: ReceiptQuery,
  responses: { 200: { description: "receipt body", schema: StopReceiptSchema } },
  errors: [400, 404],
});
