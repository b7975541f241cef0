// The gate (docs/architecture.md#, #the-wire-contract): every protected action asks first.
import { z } from "zod";
import { DecisionSchema, Epoch, GateReasonSchema, Id, IsoTime, OperationStateSchema, requestShape, responseShape } from "./common";
import { registerPath } from "./registry";

export const BudgetUnit = z.string().regex(/^[a-z][a-z0-9_]{0,39}$/, "a unit is lowercase letters, digits and _ (at most 40)");
export const CostSchema = z
  .record(BudgetUnit, z.number().finite().nonnegative().max(1e12))
  .refine((c) => Object.keys(c).length <= 16, "cost: at most 16 units");

export const GateBody = requestShape("GateRequest", {
  runId: Id,
  leaseId: Id,
  epoch: Epoch,
  operationId: Id,
  tool: z.string().trim().min(1).max(300),
  /** The call's arguments: an approval binds to their digest, and an approver sees them (policy-redacted). */
  arguments: z
    .record(z.string(), z.unknown())
    .optional()
    .refine((v) => v === undefined || JSON.stringify(v).length <= 65_536, "arguments: at most 64 KiB of JSON"),
  /** The call's cost estimate by unit (`usd`, `tokens`, `calls` or a custom unit), reserved against the team's budgets. */
  cost: CostSchema.optional(),
});
export type GateBody = z.infer<typeof GateBody>;

export const RecordedOperation = responseShape("RecordedOperation", {
  operationId: z.string(),
  state: OperationStateSchema,
  outcomeDetail: z.unknown().optional(),
  effectReceipt: z
    .object({
      effectReceiptId: z.string().optional(),
      providerOperationId: z.string().nullable().optional(),
      detail: z.unknown().optional(),
      committedAt: IsoTime.optional(),
    })
    .passthrough()
    .nullable()
    .optional(),
});

export const GateResponse = responseShape("GateDecision", {
  decision: DecisionSchema,
  reason: GateReasonSchema,
  currentEpoch: z.number().int().nullable(),
  /** On `already_applied`: the recorded outcome and effect receipt, so the effect is not repeated. */
  operation: RecordedOperation.optional(),
  /** On `awaiting_approval`, `approval_denied`, `approval_expired`: the approval this exact call is bound to. */
  approvalId: z.string().optional(),
  /** On `budget_exhausted`: the budget the call's reservation would have crossed. */
  budget: z.string().optional(),
});
export type GateResponse = z.infer<typeof GateResponse>;

registerPath({
  method: "post",
  path: "/api/v1/gate",
  operationId: "gate",
  tags: ["gate"],
  summary: "Ask the gate before a protected action",
  description:
    "One SQL round trip. The same operationId asked again returns the recorded decision and never creates a second running operation. A run that does not exist or belongs to another team answers deny missing_state.",
  callers: "agent, worker, gateway keys (operator keys whose user may act)",
  body: GateBody,
  responses: { 200: { description: "the decision", schema: GateResponse } },
  errors: [400, 403],
});
