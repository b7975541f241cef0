// Operator control writes: pause / resume / kill, breaker trip / reset (§12). Operator keys only.
import { z } from "zod";
import { BreakerSchema, IsoTime, LifecycleSchema, Reason, requestShape, responseShape } from "./common";
import { registerPath } from "./registry";

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
// Pause and resume differ only in what they do: both take a reason and answer the run's lifecycle.
const lifecyclePath = (verb: "pause" | "resume", summary: string) =>
  registerPath({
    method: "post",
    path: `/api/v1/runs/{runId}/${verb}`,
    operationId: `${verb}Run`,
    tags: ["control"],
    summary,
    callers: OPERATOR,
    body: ReasonBody,
    responses: { 200: { description: "lifecycle", schema: LifecycleResponse } },
    errors: [400, 403, 404, 409],
  });
lifecyclePath("pause", "Pause a run tree: the next gate call of the run and its descendants holds");
lifecyclePath("resume", "Resume a paused run (a killed run cannot be resumed: 409)");
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
