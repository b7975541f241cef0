// One registry of API paths, filled by each schema module at import time, so the OpenAPI document is
// generated from the SAME zod schemas the route handlers parse with (docs/architecture.md#the-wire-contract).
// Add an endpoint: call registerPath(...) in your lib/schemas/<area>.ts and import that module in
// lib/schemas/openapi.ts.
import type { z } from "zod";

export type HttpMethod = "get" | "post" | "put" | "patch" | "delete";

export interface PathSpec {
  method: HttpMethod;
  /** OpenAPI path template, e.g. "/api/v1/runs/{runId}". */
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  tags?: string[];
  /** Who may call it (documentation; enforced in lib/modules via lib/control/authz). */
  callers?: string;
  /** false for the public OpenAPI document itself. */
  auth?: boolean;
  body?: z.ZodType;
  query?: z.ZodObject;
  responses: Record<number, { description: string; schema?: z.ZodType; contentType?: string }>;
  /** Error statuses this endpoint can answer, besides 401/500 which every authenticated call may. */
  errors?: number[];
}

const paths = new Map<string, PathSpec>();

export function registerPath(spec: PathSpec): void {
  const key = `${spec.method} ${spec.path}`;
  // Modules may be evaluated more than once (dev reloads); the first registration wins.
  if (!paths.has(key)) paths.set(key, spec);
}

/** The answers of an idempotent registration: 201 the first time, 200 with the same body on a repeat. */
export function registeredOnce(schema: z.ZodType, repeat = "already registered"): PathSpec["responses"] {
  return { 201: { description: "registered", schema }, 200: { description: repeat, schema } };
}

export function registeredPaths(): PathSpec[] {
  return [...paths.values()];
}
