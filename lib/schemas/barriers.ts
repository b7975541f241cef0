// Wire shapes of the cancellation barrier (docs/architecture.md#, #the-stop-receipt, #the-wire-contract): observed-by-target reports,
// barrier view, stop receipts, reconciliation writes. Shared by route handlers, console actions, SDK, CLI.
import { z } from "zod";
import { OBSERVED_MEANINGS } from "../control/barrier";
import { registerPath } from "./registry";

export const ObservedBody = z.strictObject({
  meaning: z.enum(OBSERVED_MEANINGS),
  evidence: z.record(z.string(), z.unknown()).optional(),
}).meta({ id: "ObservedRequest" });
export type ObservedBody = z.infer<typeof ObservedBody>;

export const ObservedResponse = z.object({
  barrierId: z.string(),
  runId: z.string(),
  meaning: z.enum(OBSERVED_MEANINGS),
  observedAt: z.string(),
}).meta({ id: "ObservedResponse" });

const Rung = z.object({
  label: z.string(),
  stopState: z.string().nullable(),
  status: z.enum(["done", "pending", "uncertain", "incomplete"]),
  at: z.string().nullable(),
  evidence: z.record(z.string(), z.unknown()),
});

export const BarrierViewSchema = z.object({
  barrierId: z.string(),
  runId: z.string(),
  phase: z.enum(["revoking", "settling", "quiet", "complete"]),
  decision: z.enum(["stopped_and_quiet", "stop_incomplete"]).nullable(),
  requestedAt: z.string(),
  requestedBy: z.string(),
  reason: z.string(),
  newEpoch: z.number().int(),
  ladder: z.record(z.string(), Rung),
  counts: z.record(z.string(), z.number().int()),
  quietPeriodSeconds: z.number().int().nullable(),
  quietUntil: z.string().nullable(),
  completedAt: z.string().nullable(),
  settlements: z.array(z.record(z.string(), z.unknown())),
  receipts: z.array(z.object({ version: z.number().int(), decision: z.string(), digest: z.string(), verifiedAt: z.string() })),
}).meta({ id: "BarrierView" });

export const ReceiptQuery = z.object({
  version: z.coerce.number().int().min(1).optional(),
  format: z.enum(["json", "yaml"]).optional(),
});

export const StopReceiptSchema = z.object({
  barrier_id: z.string(),
  run_id: z.string(),
  version: z.number().int(),
  authority: z.object({ root_lease: z.string(), descendant_leases_revoked: z.number().int(), current_epoch: z.number().int() }).loose(),
  work: z.object({ queued_cancelled: z.number().int(), in_flight_settled: z.number().int(), scheduled_retries_cancelled: z.number().int() }).loose(),
  effects: z.object({ completed_and_verified: z.number().int(), cancelled_without_effect: z.number().int(), unknown: z.number().int() }),
  last_settled_at: z.string().nullable(),
  quiet_period_seconds: z.number().int(),
  verified_at: z.string(),
  decision: z.enum(["stopped_and_quiet", "stop_incomplete"]),
  reconciliation: z.array(z.object({ operation_id: z.string(), assignee: z.string() }).loose()),
  effect_receipts: z.array(z.record(z.string(), z.unknown())),
  digest: z.string(),
}).loose().meta({ id: "StopReceipt" });

export const AssignReconciliationBody = z.strictObject({ assigneeUserId: z.string().trim().min(1) });
export const ResolveReconciliationBody = z.strictObject({
  resolution: z.enum(["effect_present", "effect_absent"]),
  evidence: z.union([z.string().trim().min(1, "evidence is required").max(4000), z.record(z.string(), z.unknown())]),
});
export type ResolveReconciliationInput = z.infer<typeof ResolveReconciliationBody>;

registerPath({
  method: "post", path: "/api/v1/runs/{runId}/observed", operationId: "reportObserved", tags: ["barrier"],
  summary: "Report that the target observed the cancellation, with what the acknowledgment means",
  description: "Recorded on the barrier covering the run as the 'observed by target' rung. 409 when no barrier covers the run.",
  callers: "agent, worker and gateway keys",
  body: ObservedBody, responses: { 200: { description: "recorded", schema: ObservedResponse } }, errors: [400, 403, 404, 409],
});
registerPath({
  method: "get", path: "/api/v1/barriers/{barrierId}", operationId: "getBarrier", tags: ["barrier"],
  summary: "A barrier: phase, the stop ladder rung by rung, counts, settlements and receipt versions",
  responses: { 200: { description: "barrier", schema: BarrierViewSchema } }, errors: [404],
});
registerPath({
  method: "get", path: "/api/v1/barriers/{barrierId}/receipt", operationId: "getReceipt", tags: ["barrier"],
  summary: "The stop receipt (latest version, or ?version=n); YAML with ?format=yaml or Accept: application/yaml",
  description: "404 until the barrier issued its first receipt. `digest` is sha256 over the canonical JSON (sorted keys, no whitespace) of the body without `digest`.",
  query: ReceiptQuery,
  responses: { 200: { description: "receipt body", schema: StopReceiptSchema } }, errors: [400, 404],
});
