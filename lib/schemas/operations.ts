// Operations: queued / scheduled / retry work, admitted at dequeue, completed with its effect (§12).
import { z } from "zod";
import { Epoch, GateReasonSchema, Id, IsoTime, OperationStateSchema, requestShape, responseShape } from "./common";
import { GateResponse } from "./gate";
import { registerPath, registeredOnce, type PathSpec } from "./registry";
import { CostSchema } from "./gate";
import { REPORTED_OUTCOMES } from "../control/types";

export const RegisterOperationBody = requestShape("RegisterOperationRequest", {
  runId: Id,
  leaseId: Id,
  epoch: Epoch,
  operationId: Id,
  kind: z.enum(["queued", "scheduled", "retry"]),
  tool: z.string().trim().min(1).max(300),
  notBefore: IsoTime.optional(),
  expiresAt: IsoTime.optional(),
  argsDigest: z.string().max(200).optional(),
  /** The queue that holds the job, e.g. "pg-boss:deploys" or "bullmq:emails": a kill cancels it there. */
  providerName: z.string().min(1).max(200).optional(),
  providerJobId: z.string().min(1).max(300).optional(),
});
export type RegisterOperationBody = z.infer<typeof RegisterOperationBody>;

export const RegisterOperationResponse = responseShape("RegisterOperationResponse", {
  operationId: z.string(),
  state: OperationStateSchema,
  /** false when the same operationId was already registered with the same run (idempotent, 200). */
  created: z.boolean(),
});
export type RegisterOperationResponse = z.infer<typeof RegisterOperationResponse>;

/** A worker that did not register the work presents the lease the holder passed it (docs/security/authorization.md#holders). */
const PresentedLease = Id.optional().describe("a lease of the run (or an ancestor), when the caller is not the key that registered it");

export const AdmitBody = requestShape("AdmitRequest", { leaseId: PresentedLease });
export type AdmitBody = z.infer<typeof AdmitBody>;
export const HeartbeatBody = requestShape("HeartbeatRequest", { leaseId: PresentedLease });
export type HeartbeatBody = z.infer<typeof HeartbeatBody>;

export const EffectInput = z.strictObject({
  providerOperationId: z.string().trim().min(1).max(300),
  detail: z.unknown().optional(),
  committedAt: IsoTime.optional(),
  rollbackOwner: z.string().max(300).optional(),
});

export const CompleteBody = requestShape("CompleteOperationRequest", {
  /** aborted_unknown: the executor aborted a running call (kill, caller cancel, lost link) and cannot
   *  know whether its effect happened — evidence for the barrier, never proof either way (no effect). */
  outcome: z.enum(REPORTED_OUTCOMES),
  effect: EffectInput.optional(),
  detail: z.unknown().optional(),
  leaseId: PresentedLease,
  /** The actual cost by unit: it replaces the gate's reserved estimate in each budget (docs/policies.md#budgets). */
  cost: CostSchema.optional(),
});
export type CompleteBody = z.infer<typeof CompleteBody>;

export const CompleteResponse = responseShape("CompleteOperationResponse", {
  operationId: z.string(),
  state: OperationStateSchema,
  effectReceiptId: z.string().nullable(),
  breaker: z.enum(["closed", "open", "half_open"]),
});
export type CompleteResponse = z.infer<typeof CompleteResponse>;

/** Where the running work is held (a task id at an MCP server or A2A agent): the barrier engine asks there. */
export const RecordProviderBody = requestShape("RecordProviderRequest", {
  /** A providers row of this team (kind mcp or a2a). */
  providerName: z.string().min(1).max(200),
  /** The provider's own id for the work, e.g. the task id. */
  providerJobId: z.string().min(1).max(300),
  leaseId: PresentedLease,
});
export type RecordProviderBody = z.infer<typeof RecordProviderBody>;

export const RecordProviderResponse = responseShape("RecordProviderResponse", {
  operationId: z.string(),
  providerName: z.string(),
  providerJobId: z.string(),
  /** false when the same reference was already recorded (idempotent). */
  recorded: z.boolean(),
});
export type RecordProviderResponse = z.infer<typeof RecordProviderResponse>;

export const HeartbeatResponse = responseShape("HeartbeatResponse", {
  continue: z.boolean(),
  reason: GateReasonSchema,
  currentEpoch: z.number().int().nullable(),
});
export type HeartbeatResponse = z.infer<typeof HeartbeatResponse>;

registerPath({
  method: "post",
  path: "/api/v1/operations",
  operationId: "registerOperation",
  tags: ["operations"],
  summary: "Register queued, scheduled or retry work so a kill can cancel it",
  description:
    "Checked against current authority: a killed, revoked, expired or stale-epoch run cannot enqueue (409 with the gate reason). The same operationId again returns the existing operation (200).",
  callers: "agent, worker, gateway keys",
  body: RegisterOperationBody,
  responses: registeredOnce(RegisterOperationResponse),
  errors: [400, 403, 404, 409],
});
// Admit, complete and heartbeat act on one registered operation, for the keys that run it.
const operationPath = (verb: string, spec: Pick<PathSpec, "summary" | "description" | "body" | "responses" | "errors">) =>
  registerPath({
    method: "post",
    path: `/api/v1/operations/{operationId}/${verb}`,
    operationId: `${verb}Operation`,
    tags: ["operations"],
    callers: "worker, agent, gateway keys",
    ...spec,
  });
operationPath("admit", {
  summary: "Dequeue-time gate check; allow moves the operation to running",
  body: AdmitBody,
  responses: { 200: { description: "the decision", schema: GateResponse } },
  errors: [400, 403, 404],
});
operationPath("complete", {
  summary: "Report the outcome and effect of a running operation",
  description:
    "A succeeded outcome with an effect records an EffectReceipt. Feeds the run's breaker. On a killed run tree the report is kept as barrier evidence and answered 409.",
  body: CompleteBody,
  responses: { 200: { description: "recorded", schema: CompleteResponse } },
  errors: [400, 403, 404, 409],
});
operationPath("heartbeat", {
  summary: "Keep a long operation alive; continue=false means stop now",
  body: HeartbeatBody,
  responses: { 200: { description: "continue or stop", schema: HeartbeatResponse } },
  errors: [400, 403, 404],
});
operationPath("provider", {
  summary: "Record where a running operation's work is held (a remote task id), so a stop can cancel and check it there",
  description:
    "Only the operation's holder, only while it runs, only once: the same reference again answers recorded=false, another one 409. providerName must name a providers row of the team.",
  body: RecordProviderBody,
  responses: { 200: { description: "recorded", schema: RecordProviderResponse } },
  errors: [400, 403, 404, 409],
});
