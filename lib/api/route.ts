// The one wrapper every app/api/v1 route handler goes through (docs/architecture.md#, #conventions): authenticate the
// bearer key into a Principal (re-read from the database on every call), parse body and query with
// zod (400 naming the bad field, nothing changes), and map QuiesceError → { error: { code, message } }.
import "server-only";
import { randomUUID } from "node:crypto";
import type { z } from "zod";
import { QuiesceError, asQuiesceError } from "../errors";
import { bearerSecret, hashKeySecret } from "../keys";
import { authenticateKey } from "../dal/api-keys";
import type { Principal } from "../dal/principal";
import { zodToBadRequest } from "./zod-error";
import { logger, requestIdFrom, type Logger } from "../log";

export type KeyPrincipal = Extract<Principal, { type: "key" }>;

/**
 * auth:
 *  - "key" (default): the key is authenticated here; the handler gets `principal`.
 *  - "hash": the handler gets only `keyHash` — for the gate's hot path, whose single SQL statement
 *    authenticates the key itself in the same round trip (docs/architecture.md#the-gate).
 *  - "none": public (the OpenAPI document).
 */
export type AuthMode = "key" | "hash" | "none";

export interface RouteSpec<B extends z.ZodType | undefined, Q extends z.ZodType | undefined, A extends AuthMode> {
  body?: B;
  query?: Q;
  auth?: A;
}

export interface RouteArgs<B, Q, A extends AuthMode> {
  principal: A extends "key" ? KeyPrincipal : null;
  keyHash: A extends "none" ? null : string;
  body: B extends z.ZodType ? z.output<B> : undefined;
  query: Q extends z.ZodType ? z.output<Q> : undefined;
  params: Record<string, string>;
  req: Request;
  /** The caller's x-request-id (or a fresh one); echoed on the response and on every log line. */
  requestId: string;
  log: Logger;
}

export type RouteResult = Response | { status?: number; json: unknown; headers?: Record<string, string> };
export type RouteContext = { params: Promise<Record<string, string>> };
export type RouteHandler = (req: Request, ctx: RouteContext) => Promise<Response>;

export function jsonResponse(status: number, json: unknown, headers?: Record<string, string>): Response {
  return new Response(JSON.stringify(json), {
    status,
    headers: { "content-type": "application/json; charset=utf-8", "cache-control": "no-store", ...headers },
  });
}

export function errorResponse(err: QuiesceError): Response {
  const headers: Record<string, string> = err.code === "unauthenticated" ? { "www-authenticate": 'Bearer realm="quiesce"' } : {};
  return jsonResponse(err.httpStatus, err.toBody(), headers);
}

const MAX_BODY_BYTES = 1_000_000;

async function readJsonBody(req: Request): Promise<unknown> {
  const text = await req.text();
  if (text.length > MAX_BODY_BYTES) throw new QuiesceError("bad_request", "body: larger than 1 MB");
  if (text.trim() === "") return {};
  try {
    return JSON.parse(text);
  } catch {
    throw new QuiesceError("bad_request", "body: not valid JSON");
  }
}

function queryObject(url: URL): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of url.searchParams) out[k] = v;
  return out;
}

export function apiRoute<
  B extends z.ZodType | undefined = undefined,
  Q extends z.ZodType | undefined = undefined,
  A extends AuthMode = "key",
>(spec: RouteSpec<B, Q, A>, handler: (args: RouteArgs<B, Q, A>) => Promise<RouteResult>): RouteHandler {
  const auth: AuthMode = spec.auth ?? "key";
  return async (req, ctx) => {
    const started = performance.now();
    const requestId = requestIdFrom(req.headers.get("x-request-id"), randomUUID);
    const url = new URL(req.url);
    const log = logger("api").child({ requestId, method: req.method, path: url.pathname });
    const done = (res: Response): Response => {
      try { res.headers.set("x-request-id", requestId); } catch { /* an immutable (fetched) response keeps its headers */ }
      const ms = Math.round(performance.now() - started);
      if (res.status >= 500) log.error({ status: res.status, ms }, "request failed");
      else log.debug({ status: res.status, ms }, "request");
      return res;
    };
    try {
      let principal: KeyPrincipal | null = null;
      let keyHash: string | null = null;
      if (auth !== "none") {
        const secret = bearerSecret(req.headers.get("authorization"));
        if (!secret) throw new QuiesceError("unauthenticated", "missing bearer token: send Authorization: Bearer <api key>");
        keyHash = hashKeySecret(secret);
        if (auth === "key") {
          principal = await authenticateKey(secret);
          if (!principal) throw new QuiesceError("unauthenticated", "invalid, revoked or expired api key");
        }
      }
      const params = (await ctx?.params) ?? {};
      let body: unknown = undefined;
      if (spec.body) {
        const parsed = spec.body.safeParse(await readJsonBody(req));
        if (!parsed.success) throw zodToBadRequest(parsed.error, "body");
        body = parsed.data;
      }
      let query: unknown = undefined;
      if (spec.query) {
        const parsed = spec.query.safeParse(queryObject(url));
        if (!parsed.success) throw zodToBadRequest(parsed.error, "query");
        query = parsed.data;
      }
      const result = await handler({ principal, keyHash, body, query, params, req, requestId, log } as RouteArgs<B, Q, A>);
      if (result instanceof Response) return done(result);
      return done(jsonResponse(result.status ?? 200, result.json, result.headers));
    } catch (err) {
      if (!(err instanceof QuiesceError)) log.error({ err }, "unhandled error");
      return done(errorResponse(asQuiesceError(err)));
    }
  };
}
