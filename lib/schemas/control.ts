// Operator control writes: pause / resume / kill, breaker trip / reset (§12). Operator keys only.
import { z } from "zod";
import { BreakerSchema, IsoTime, LifecycleSchema, Reason, requestShape, responseShape } from "./common";
import { registerPath, type PathSpec } from "./registry";

export const ReasonBody = requestShape("ReasonRequest", { reason: Reason });
export type ReasonBody = z.infer<typeof ReasonBody>;

/** When, by whom and why a run's lifecycle or breaker last changed, as both answers report it. */
const LastChange = { changedAt: IsoTime, changedBy: z.string().nullable(), reason: z.string().nullable() };

export const LifecycleResponse = responseShape("LifecycleResponse", {
  runId: z.string(),
  lifecycle: LifecycleSchema,
  ...LastChange,
  /** false when the run was already in that state (nothing written). */
  changed: z.boolean(),
});
export type LifecycleResponse = z.infer<typeof LifecycleResponse>;

export const BreakerBody = requestShape("BreakerRequest", {
  action: z.enum(["trip", "reset"]),
  reason: Reason,
});
export type BreakerBody = z.infer<typeof BreakerBody>;

export const BreakerResponse = responseShape("BreakerResponse", {
  runId: z.string(),
  breaker: BreakerSchema,
  ...LastChange,
  failures: z.number().int(),
  changed: z.boolean(),
});
export type BreakerResponse = z.infer<typeof BreakerResponse>;

export const KillResponse = responseShape("KillResponse", {
  barrierId: z.string(),
  created: z.boolean().optional(),
});
export type KillResponse = z.infer<typeof KillResponse>;

const OPERATOR = "operator keys whose user's current role allows it (machine keys: 403)";
/** A control write on one run, `POST /api/v1/runs/{runId}/<verb>`, for operator keys (`<verb>Run` unless named). */
const controlPath = (verb: string, spec: Pick<PathSpec, "summary" | "body" | "responses" | "errors"> & { operationId?: string }) =>
  registerPath({
    method: "post",
    path: `/api/v1/runs/{runId}/${verb}`,
    operationId: `${verb}Run`,
    tags: ["control"],
    callers: OPERATOR,
    ...spec,
  });
// Pause and resume differ only in what they do: both take a reason and answer the run's lifecycle.
const LIFECYCLE = {
  body: ReasonBody,
  responses: { 200: { description: "lifecycle", schema: LifecycleResponse } },
  errors: [400, 403, 404, 409],
};
controlPath("pause", { summary: "Pause a run tree: the next gate call of the run and its descendants holds", ...LIFECYCLE });
controlPath("resume", { summary: "Resume a paused run (a killed run cannot be resumed: 409)", ...LIFECYCLE });
controlPath("kill", {
  summary: "Kill a run tree and start its cancellation barrier",
  body: ReasonBody,
  responses: { 202: { description: "barrier started (or the open barrier)", schema: KillResponse } },
  errors: [400, 403, 404],
});
controlPath("breaker", {
  operationId: "setBreaker",
  summary: "Trip or reset a run's circuit breaker (never touches lifecycle)",
  body: BreakerBody,
  responses: { 200: { description: "breaker", schema: BreakerResponse } },
  errors: [400, 403, 404],
});
