// Fleet stop (docs/fleet-stop.md): POST /api/v1/stops, GET /api/v1/stops/{stopId}, POST /api/v1/stops/{stopId}/resume.
import { z } from "zod";
import { HARNESSES } from "../control/types";
import { RUN_STATUSES, STOP_ACTIONS } from "../control/fleet";
import { Id, IsoTime, Reason, requestShape, responseShape } from "./common";
import { ReasonBody } from "./control";
import { registerPath } from "./registry";

export const StopFilterSchema = z
  .strictObject({
    harness: z.array(z.enum(HARNESSES)).min(1).max(HARNESSES.length).optional(),
    /** the harness's agent identity (native agent id) or the run's creator label */
    agent: z.array(Id).min(1).max(100).optional(),
    taskPrefix: z.string().min(1).max(200).optional(),
    createdAfter: IsoTime.optional(),
    createdBefore: IsoTime.optional(),
    status: z.array(z.enum(RUN_STATUSES)).min(1).max(RUN_STATUSES.length).optional(),
    runIds: z.array(Id).min(1).max(10_000).optional(),
  })
  .meta({ id: "StopFilter", description: "Every member narrows; {} is the whole team. A filter never reaches beyond the caller's team." });
export type StopFilterInput = z.infer<typeof StopFilterSchema>;

export const CreateStopBody = requestShape("CreateStopRequest", {
  action: z.enum(STOP_ACTIONS),
  filter: StopFilterSchema.default({}),
  reason: Reason,
  dryRun: z.boolean().default(false),
});
export type CreateStopBody = z.infer<typeof CreateStopBody>;

export const StopRunSample = z
  .object({
    runId: z.string(),
    taskId: z.string(),
    harness: z.enum(HARNESSES),
    status: z.enum(RUN_STATUSES),
    createdAt: IsoTime,
  })
  .meta({ id: "StopRunSample" });

export const StopDryRunResponse = responseShape("StopDryRunResponse", {
  dryRun: z.literal(true),
  action: z.enum(STOP_ACTIONS),
  filter: StopFilterSchema,
  /** runs the scope would cover now (the run or an ancestor matches; neither killed nor finished) */
  matched: z.number().int(),
  /** barriers a kill would start (the top-most matched run of each tree) */
  barrierTargets: z.number().int(),
  /** covered runs working now: calls in flight, or a gate call within the last minute (docs/console.md#run-activity) */
  working: z.number().int(),
  sample: z.array(StopRunSample),
});
export type StopDryRunResponse = z.infer<typeof StopDryRunResponse>;

export const FleetRunReceiptSchema = responseShape("FleetRunReceipt", {
  runId: z.string(),
  barrierId: z.string().nullable(),
  phase: z.string().nullable(),
  decision: z.enum(["stopped_and_quiet", "stop_incomplete"]).nullable(),
  digest: z.string().nullable(),
  link: z.string().nullable(),
  error: z.string().nullable(),
});

export const StopView = responseShape("StopView", {
  stopId: z.string(),
  action: z.enum(STOP_ACTIONS),
  filter: StopFilterSchema,
  reason: z.string(),
  requestedBy: z.string(),
  createdAt: IsoTime,
  /** the scope is live: every matching run's gate calls are held (pause) or denied (kill) */
  dispatchStopped: z.boolean(),
  liftedAt: IsoTime.nullable(),
  matched: z.number().int(),
  barriers: z.object({
    total: z.number().int(),
    started: z.number().int(),
    complete: z.number().int(),
    stopIncomplete: z.number().int(),
    failed: z.number().int(),
  }),
  openReconciliations: z.number().int(),
  runs: z.array(FleetRunReceiptSchema),
  receipt: z
    .object({
      decision: z.enum(["stopped_and_quiet", "stop_incomplete"]),
      digest: z.string(),
      issuedAt: IsoTime,
      body: z.record(z.string(), z.unknown()),
    })
    .nullable(),
});
export type StopView = z.infer<typeof StopView>;

const OPERATOR = "operator keys whose user is an operator, manager or admin of the team (machine keys: 403)";
registerPath({
  method: "post",
  path: "/api/v1/stops",
  operationId: "createStop",
  tags: ["control"],
  summary: "Fleet stop: pause or kill every run of the team matching a filter as one durable scope (dryRun: count and sample only)",
  callers: OPERATOR,
  body: CreateStopBody,
  responses: {
    202: { description: "scope committed: dispatch is stopped for every matching run", schema: StopView },
    200: { description: "dry run", schema: StopDryRunResponse },
  },
  errors: [400, 403],
});
registerPath({
  method: "get",
  path: "/api/v1/stops/{stopId}",
  operationId: "getStop",
  tags: ["control"],
  summary: "A fleet stop's progress: matched, barriers started / complete, stop_incomplete, open reconciliations, the fleet receipt",
  callers: OPERATOR,
  responses: { 200: { description: "progress", schema: StopView } },
  errors: [403, 404],
});
registerPath({
  method: "post",
  path: "/api/v1/stops/{stopId}/resume",
  operationId: "resumeStop",
  tags: ["control"],
  summary: "Lift a pause scope (a kill scope is for good: 409)",
  callers: OPERATOR,
  body: ReasonBody,
  responses: { 200: { description: "lifted", schema: StopView } },
  errors: [400, 403, 404, 409],
});

export const FinishRunBody = requestShape("FinishRunRequest", {
  /** Finish even with work still queued or running: queued work is cancelled, running calls become
   *  unknown outcomes for a person to reconcile (docs/fleet-stop.md#run-completion). */
  abandon: z.boolean().optional(),
  /** A caller that did not register the run presents one of its leases (docs/security/authorization.md#holders). */
  leaseId: Id.optional(),
});
export type FinishRunBody = z.infer<typeof FinishRunBody>;

export const FinishRunResponse = responseShape("FinishRunResponse", {
  runId: z.string(),
  finishedAt: IsoTime,
  /** runs of the subtree newly marked finished by this call (0 when it was already finished) */
  finished: z.number().int(),
  /** operations settled because the holder said abandon (queued cancelled, running made unknown) */
  abandoned: z.number().int(),
});
export type FinishRunResponse = z.infer<typeof FinishRunResponse>;

registerPath({
  method: "post",
  path: "/api/v1/runs/{runId}/finish",
  operationId: "finishRun",
  tags: ["runs"],
  summary:
    "The run ended (session end, end of a thread, SDK finish): it and its subtree are finished and the gate denies them `finished`; idempotent. Only the run's holder; refused (409) while work is queued or running unless `abandon`",
  callers: "the run's holder (the key that registered it, or a caller presenting its lease)",
  body: FinishRunBody,
  responses: { 200: { description: "finished", schema: FinishRunResponse } },
  errors: [400, 403, 404, 409],
});
