// Operator control writes: pause / resume / kill, breaker trip / reset (§12). Operator keys only.
import { z } from "zod";
import { BreakerSchema, IsoTime, LifecycleSchema, Reason } from "./common";
import { registerPath } from "./registry";

export const ReasonBody = z.strictObject({ reason: Reason }).meta({ id: "ReasonRequest" });
export type ReasonBody = z.infer<typeof ReasonBody>;

export const LifecycleResponse = z
  .object({
    runId: z.string(),
    lifecycle: LifecycleSchema,
    changedAt: IsoTime,
    changedBy: z.string().nullable(),
    reason: z.string().nullable(),
    /** false when the run was already in that state (nothing written). */
    changed: z.boolean(),
  })
  .meta({ id: "LifecycleResponse" });
export type LifecycleResponse = z.infer<typeof LifecycleResponse>;

export const BreakerBody = z
  .strictObject({
    action: z.enum(["trip", "reset"]),
    reason: Reason,
  })
  .meta({ id: "BreakerRequest" });
export type BreakerBody = z.infer<typeof BreakerBody>;

export const BreakerResponse = z
  .object({
    runId: z.string(),
    breaker: BreakerSchema,
    changedAt: IsoTime,
    changedBy: z.string().nullable(),
    reason: z.string().nullable(),
    failures: z.number().int(),
    changed: z.boolean(),
  })
  .meta({ id: "BreakerResponse" });
export type BreakerResponse = z.infer<typeof BreakerResponse>;

export const KillResponse = z
  .object({
    barrierId: z.string(),
    created: z.boolean().optional(),
  })
  .meta({ id: "KillResponse" });
export type KillResponse = z.infer<typeof KillResponse>;

const OPERATOR = "operator keys whose user's current role allows it (machine keys: 403)";
registerPath({
  method: "post",
  path: "/api/v1/runs/{runId}/pause",
  operationId: "pauseRun",
  tags: ["control"],
  summary: "Pause a run tree: the next gate call of the run and its descendants holds",
  callers: OPERATOR,
  body: ReasonBody,
  responses: { 200: { description: "lifecycle", schema: LifecycleResponse } },
  errors: [400, 403, 404, 409],
});
registerPath({
  method: "post",
  path: "/api/v1/runs/{runId}/resume",
  operationId: "resumeRun",
  tags: ["control"],
  summary: "Resume a paused run (a killed run cannot be resumed: 409)",
  callers: OPERATOR,
  body: ReasonBody,
  responses: { 200: { description: "lifecycle", schema: LifecycleResponse } },
  errors: [400, 403, 404, 409],
});
registerPath({
  method: "post",
  path: "/api/v1/runs/{runId}/kill",
  operationId: "killRun",
  tags: ["control"],
  summary: "Kill a run tree and start its cancellation barrier",
  callers: OPERATOR,
  body: ReasonBody,
  responses: { 202: { description: "barrier started (or the open barrier)", schema: KillResponse } },
  errors: [400, 403, 404],
});
registerPath({
  method: "post",
  path: "/api/v1/runs/{runId}/breaker",
  operationId: "setBreaker",
  tags: ["control"],
  summary: "Trip or reset a run's circuit breaker (never touches lifecycle)",
  callers: OPERATOR,
  body: BreakerBody,
  responses: { 200: { description: "breaker", schema: BreakerResponse } },
  errors: [400, 403, 404],
});
