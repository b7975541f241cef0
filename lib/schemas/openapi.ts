// Builds the OpenAPI 3.1 document from the registered paths and their zod schemas (docs/architecture.md#the-wire-contract).
// Each schema module registers its own paths at import time; import it here to publish it.
import { z } from "zod";
import { registeredPaths, type PathSpec } from "./registry";
import { ErrorBody } from "./common";
import "./runs";
import "./gate";
import "./operations";
import "./control";
import "./barriers";
import "./stops";
import "./recovery";
import "./restart";
import "./policy";
import "./providers";

type Json = Record<string, unknown>;

const STATUS_TEXT: Record<number, string> = {
  400: "malformed input: the message names the bad field; nothing was changed",
  401: "missing, invalid, revoked or expired API key",
  403: "this key may not do that (machine keys never write control state)",
  404: "not found (another team's resources answer the same)",
  409: "conflict with the current state",
  413: "request body larger than 1 MB (refused before it is read)",
  429: "too many bad API keys from this address, or past a quota of this key or run (docs/security/hardening.md#quotas): wait for Retry-After seconds",
  500: "internal error",
};

/**
 * Converts one zod schema to JSON Schema 2020-12 (what OpenAPI 3.1 uses), hoisting schemas that carry
 * a `.meta({ id })` into components so the document names them.
 */
function toSchema(schema: z.ZodType, io: "input" | "output", components: Json): Json {
  const raw = z.toJSONSchema(schema, { io, unrepresentable: "any" });
  // Named sub-schemas come out as $defs; in the document they live under components.
  const js = JSON.parse(JSON.stringify(raw).replaceAll('"#/$defs/', '"#/components/schemas/')) as Json;
  const { $defs, $schema: _ignored, ...rest } = js as Json & { $defs?: Json; $schema?: unknown };
  for (const [k, v] of Object.entries($defs ?? {})) components[k] = v;
  // A named root comes out as { $ref } into its own $defs entry, already hoisted above.
  if (typeof rest.$ref === "string" && Object.keys(rest).length === 1) return rest;
  const id = (z.globalRegistry.get(schema) as { id?: string } | undefined)?.id;
  if (id) {
    components[id] = rest;
    return { $ref: `#/components/schemas/${id}` };
  }
  return rest;
}

function queryParameters(q: z.ZodObject, components: Json): Json[] {
  const shape = q.shape as Record<string, z.ZodType>;
  const js = toSchema(q, "input", components) as { properties?: Record<string, Json>; required?: string[] };
  return Object.keys(shape).map((name) => ({
    name,
    in: "query",
    required: js.required?.includes(name) ?? false,
    schema: js.properties?.[name] ?? {},
  }));
}

function pathParameters(p: string): Json[] {
  return [...p.matchAll(/\{(\w+)\}/g)].map((m) => ({ name: m[1], in: "path", required: true, schema: { type: "string" } }));
}

function operationOf(spec: PathSpec, components: Json): Json {
  const responses: Json = {};
  for (const [status, r] of Object.entries(spec.responses)) {
    responses[status] = {
      description: r.description,
      ...(r.schema ? { content: { [r.contentType ?? "application/json"]: { schema: toSchema(r.schema, "output", components) } } } : {}),
    };
  }
  const errs = new Set(spec.errors ?? []);
  if (spec.auth !== false) {
    errs.add(401);
    errs.add(429);
  }
  if (spec.body) errs.add(413);
  errs.add(500);
  for (const s of [...errs].sort()) {
    responses[String(s)] = {
      description: STATUS_TEXT[s] ?? "error",
      content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } },
    };
  }
  return {
    operationId: spec.operationId,
    summary: spec.summary,
    ...(spec.description || spec.callers
      ? { description: [spec.description, spec.callers ? `Callers: ${spec.callers}.` : ""].filter(Boolean).join("\n\n") }
      : {}),
    ...(spec.tags ? { tags: spec.tags } : {}),
    ...(spec.auth === false ? { security: [] } : {}),
    parameters: [...pathParameters(spec.path), ...(spec.query ? queryParameters(spec.query, components) : [])],
    ...(spec.body
      ? { requestBody: { required: true, content: { "application/json": { schema: toSchema(spec.body, "input", components) } } } }
      : {}),
    responses,
  };
}

export function buildOpenApiDocument(opts: { serverUrl?: string } = {}): Json {
  const components: Json = {};
  toSchema(ErrorBody, "output", components);
  const paths: Record<string, Json> = {};
  const specs = [...registeredPaths(), OPENAPI_SPEC].sort((a, b) => a.path.localeCompare(b.path));
  for (const spec of specs) {
    (paths[spec.path] ??= {})[spec.method] = operationOf(spec, components);
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "Quiesce machine API",
      version: "1",
      description:
        "Control plane for stopping agents. Machine keys (agent, worker, gateway) read and ask; operator keys carry their user's current role. Errors: { error: { code, message } }.",
    },
    jsonSchemaDialect: "https://json-schema.org/draft/2020-12/schema",
    ...(opts.serverUrl ? { servers: [{ url: opts.serverUrl }] } : {}),
    security: [{ bearer: [] }],
    paths,
    components: {
      securitySchemes: { bearer: { type: "http", scheme: "bearer", description: "API key from `quiesce keys create`" } },
      schemas: components,
    },
  };
}

const OPENAPI_SPEC: PathSpec = {
  method: "get",
  path: "/api/v1/openapi.json",
  operationId: "openapi",
  tags: ["meta"],
  auth: false,
  summary: "This document",
  responses: { 200: { description: "OpenAPI 3.1 document" } },
};

let served: string | undefined;

/**
 * The document as served by `GET /api/v1/openapi.json`: built and serialized once per process, on first
 * use (every schema module has registered its paths by then), and answered from memory afterwards. It
 * changes only with the code, so rebuilding it per request bought nothing (docs/design/api-process.md).
 */
export function servedOpenApiJson(): string {
  served ??= JSON.stringify(buildOpenApiDocument());
  return served;
}
