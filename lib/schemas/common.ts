// Shared field schemas for the machine API (docs/architecture.md#the-wire-contract). Times are ISO 8601 UTC.
import { z } from "zod";
import { BREAKER_STATES, DECISIONS, GATE_REASONS, LIFECYCLES, OPERATION_STATES } from "../control/types";

export const Id = z.string().trim().min(1).max(200);
export const Reason = z.string().trim().min(1, "a reason is required").max(2000);
export const IsoTime = z.iso.datetime({ offset: true });
/** The largest value of a PostgreSQL `integer` column: every integer input is bounded to its column. */
export const PG_INT_MAX = 2_147_483_647;
export const Epoch = z.number().int().min(0).max(PG_INT_MAX);

export const LifecycleSchema = z.enum(LIFECYCLES);
export const BreakerSchema = z.enum(BREAKER_STATES);
export const DecisionSchema = z.enum(DECISIONS);
export const GateReasonSchema = z.enum(GATE_REASONS);
export const OperationStateSchema = z.enum(OPERATION_STATES);

/**
 * A wire shape the OpenAPI document names as component `id`, written with its id. A request refuses
 * unknown fields (`strictObject`); a response may gain fields (`object`).
 */
export const requestShape = <T extends z.core.$ZodLooseShape>(id: string, shape: T) => z.strictObject(shape).meta({ id });
export const responseShape = <T extends z.core.$ZodLooseShape>(id: string, shape: T) => z.object(shape).meta({ id });

export const ErrorBody = responseShape("Error", {
  error: z.object({
    code: z.string(),
    message: z.string(),
    details: z.unknown().optional(),
  }),
});

/** `{}` for action endpoints that take no input (admit, heartbeat); unknown fields are refused. */
export const EmptyBody = z.strictObject({});
