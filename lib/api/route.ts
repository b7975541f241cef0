// The one wrapper every app/api/v1 route handler goes through (docs/architecture.md#, #conventions): authenticate the
// bearer key into a Principal (from the database, or in the API process from its bounded key cache,
// lib/api/key-cache.ts), parse body and query with zod (400 naming the bad field, nothing changes), and
// map QuiesceError → { error: { code, message } }. The checks run once, in `handleApi`, over a small
// request interface: Next hands it a Web Request; the API process (lib/api/node-server.ts) hands it
// node:http's request directly and writes the plain answer itself, without building a Web
// Request/Response per call (docs/design/api-process.md).
import "server-only";
import { randomUUID } from "node:crypto";
import type { z } from "zod";
import { QuiesceError, asQuiesceError, badRequest } from "../platform/errors";
import { bearerSecret, hashKeySecret } from "../platform/auth/api-key";
import { cachedAuthenticateKey } from "./key-cache";
import type { Principal } from "../platform/auth/principal";
import { zodToBadRequest } from "./zod-error";
import { findUnsafeText } from "../platform/security/text";
import { frontAddress } from "../platform/security/client-address";
import { badKeyWait, recordBadKey } from "../modules/members";
import { logger, requestIdFrom, type Logger } from "../platform/log";
import type { Quota, QuotaPass } from "../modules/gate";

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
  /**
   * The route's quota (lib/modules/gate/quotas.ts, docs/security/hardening.md#quotas): entered after the body is parsed and
   * before the handler, left when the answer is done — for a streamed answer, when its body ends.
   */
  quota?: Quota<NoInfer<B extends z.ZodType ? z.output<B> : undefined>>;
}

export interface RouteArgs<B, Q, A extends AuthMode> {
  principal: A extends "key" ? KeyPrincipal : null;
  keyHash: A extends "none" ? null : string;
  body: B extends z.ZodType ? z.output<B> : undefined;
  query: Q extends z.ZodType ? z.output<Q> : undefined;
  params: Record<string, string>;
  /** A request header (lower-case name), without building a Web Request. */
  header: (name: string) => string | null;
  /** The Web Request (its body already read when the route has one); in the API process built on first use. */
  req: Request;
  /** The caller's x-request-id (or a fresh one); echoed on the response and on every log line. */
  requestId: string;
  log: Logger;
}

/** An answer as data: the API process writes it straight to the socket, Next gets it as a Response. */
export interface PlainAnswer {
  status: number;
  json: unknown;
  headers?: Record<string, string>;
}
export type RouteResult = Response | { status?: number; json: unknown; headers?: Record<string, string> };
export type RouteContext = { params: Promise<Record<string, string>> };

/** What handleApi needs of an incoming request. */
export interface ApiRequest {
  method: string;
  /** The full URL, or null when it cannot be parsed (answered 400 where it matters). */
  url(): URL | null;
  header(name: string): string | null;
  /** The client's address (lib/platform/security/client-address.ts): from the socket in the API process, from the web front in Next. */
  clientAddress(): string;
  /** The body as UTF-8 text; null when it grows past `limit` bytes (then reading stops). */
  bodyText(limit: number): Promise<string | null>;
  /** A Web Request for the handlers that want one (event streams); the body is not part of it. */
  request(): Request;
}

/** The shared checks and the handler, as one function of (request, params): see apiRoute. */
export type ApiCore = (req: ApiRequest, params: Record<string, string>) => Promise<Response | PlainAnswer>;
export type RouteHandler = ((req: Request, ctx: RouteContext) => Promise<Response>) & { apiCore?: ApiCore };

const JSON_HEADERS = { "content-type": "application/json; charset=utf-8", "cache-control": "no-store" } as const;

export function jsonResponse(status: number, json: unknown, headers?: Record<string, string>): Response {
  return new Response(JSON.stringify(json), { status, headers: { ...JSON_HEADERS, ...headers } });
}

/** The response headers of a plain answer (content type, no-store, then the handler's own). */
export function plainHeaders(a: PlainAnswer): Record<string, string> {
  return { ...JSON_HEADERS, ...a.headers };
}

function rateLimited(wait: number): QuiesceError {
  return new QuiesceError("rate_limited", `too many bad api keys from this address: try again in ${wait} s`, { retryAfterSeconds: wait });
}

export function errorAnswer(err: QuiesceError): PlainAnswer {
  const headers: Record<string, string> = err.code === "unauthenticated" ? { "www-authenticate": 'Bearer realm="quiesce"' } : {};
  const retry = (err.details as { retryAfterSeconds?: unknown } | undefined)?.retryAfterSeconds;
  if (err.code === "rate_limited" && typeof retry === "number") headers["retry-after"] = String(retry);
  return { status: err.httpStatus, json: err.toBody(), headers };
}

export function errorResponse(err: QuiesceError): Response {
  const a = errorAnswer(err);
  return jsonResponse(a.status, a.json, a.headers);
}

/** A 4xx is a refusal that wrote nothing (the project's rule): such a call does not count against a quota. */
function refusedUnchanged(status: number): boolean {
  return status >= 400 && status < 500;
}

/** The response with its body passed through as it is read; `end` runs once, when the body ends or is cancelled. */
function onBodyEnd(res: Response, end: () => void): Response {
  if (!res.body) {
    end();
    return res;
  }
  const reader = res.body.getReader();
  let ended = false;
  const finish = () => {
    if (ended) return;
    ended = true;
    end();
  };
  const body = new ReadableStream<Uint8Array>({
    async pull(c) {
      try {
        const { done, value } = await reader.read();
        if (!done) return c.enqueue(value);
        finish();
        c.close();
      } catch (err) {
        finish();
        try {
          c.error(err);
        } catch {
          /* already cancelled by the reader */
        }
      }
    },
    cancel(reason) {
      finish();
      return reader.cancel(reason);
    },
  });
  return new Response(body, { status: res.status, statusText: res.statusText, headers: res.headers });
}

/** Request bodies larger than this are refused (413) before, or while, they are read. */
export const MAX_BODY_BYTES = 1_000_000;

/** The shape of every key secret lib/platform/auth/api-key.ts issues; anything else is refused without a lookup. */
const KEY_FORM = /^qk_[a-z]+_[A-Za-z0-9_-]{1,128}$/;

const tooLarge = () => new QuiesceError("payload_too_large", `body: larger than ${MAX_BODY_BYTES} bytes`);

/** Refuses a declared Content-Length over the limit before a single body byte is read. */
function checkDeclaredLength(req: ApiRequest): void {
  const declared = req.header("content-length");
  if (declared === null) return;
  if (!/^\d{1,15}$/.test(declared.trim())) throw badRequest("content-length: not a byte count");
  if (Number(declared) > MAX_BODY_BYTES) throw tooLarge();
}

/** Reads the body up to the limit (a chunked body is never buffered whole) and parses it as JSON. */
async function readJsonBody(req: ApiRequest): Promise<unknown> {
  let text: string | null;
  try {
    text = await req.bodyText(MAX_BODY_BYTES);
  } catch {
    // The client went away mid-body (or was cut off by the request bounds): its fault, not a server error to log.
    throw badRequest("body: the connection closed before the whole body arrived");
  }
  if (text === null) throw tooLarge();
  if (text.trim() === "") return {};
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new QuiesceError("bad_request", "body: not valid JSON");
  }
  const unsafe = findUnsafeText(json, "body");
  if (unsafe) throw badRequest(`${unsafe.field}: ${unsafe.message}`);
  return json;
}

function queryObject(url: URL): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of url.searchParams) out[k] = v;
  return out;
}

let baseLogger: Logger | undefined;
const apiLogger = (): Logger => (baseLogger ??= logger("api"));

/**
 * The request's logger, made on first use: building a pino child (bindings, redaction) for every
 * request was measurable on the hot path, and most requests never log (docs/design/api-process.md).
 */
function lazyChild(bindings: () => Record<string, unknown>): Logger {
  let real: Logger | undefined;
  return new Proxy({} as Logger, {
    get(_target, prop) {
      real ??= apiLogger().child(bindings());
      const v = Reflect.get(real, prop, real) as unknown;
      return typeof v === "function" ? (v as (...a: unknown[]) => unknown).bind(real) : v;
    },
  });
}

/** A Web Request as an ApiRequest (Next's route handlers). */
function fromWebRequest(req: Request): ApiRequest {
  let url: URL | null | undefined;
  return {
    method: req.method,
    url: () => {
      if (url === undefined) {
        try {
          url = new URL(req.url);
        } catch {
          url = null;
        }
      }
      return url;
    },
    header: (name) => req.headers.get(name),
    clientAddress: () => frontAddress(req.headers),
    request: () => req,
    async bodyText(limit) {
      if (!req.body) return "";
      const reader = req.body.getReader();
      const decoder = new TextDecoder("utf-8", { fatal: false });
      let text = "";
      let bytes = 0;
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        bytes += value.byteLength;
        if (bytes > limit) {
          await reader.cancel().catch(() => undefined);
          return null;
        }
        text += decoder.decode(value, { stream: true });
      }
      return text + decoder.decode();
    },
  };
}

export function apiRoute<
  B extends z.ZodType | undefined = undefined,
  Q extends z.ZodType | undefined = undefined,
  A extends AuthMode = "key",
>(spec: RouteSpec<B, Q, A>, handler: (args: RouteArgs<B, Q, A>) => Promise<RouteResult>): RouteHandler {
  const auth: AuthMode = spec.auth ?? "key";

  const core: ApiCore = async (req, params) => {
    const started = performance.now();
    const requestId = requestIdFrom(req.header("x-request-id"), randomUUID);
    const log = lazyChild(() => ({ requestId, method: req.method, path: req.url()?.pathname ?? "(malformed)" }));
    const done = <T extends Response | PlainAnswer>(res: T): T => {
      if (res instanceof Response) {
        try {
          res.headers.set("x-request-id", requestId);
        } catch {
          /* an immutable (fetched) response keeps its headers */
        }
      } else res.headers = { ...res.headers, "x-request-id": requestId };
      if (res.status >= 500) log.error({ status: res.status, ms: Math.round(performance.now() - started) }, "request failed");
      else if (apiLogger().isLevelEnabled("debug"))
        log.debug({ status: res.status, ms: Math.round(performance.now() - started) }, "request");
      return res;
    };
    try {
      let principal: KeyPrincipal | null = null;
      let keyHash: string | null = null;
      if (auth !== "none") {
        // Only a bad key is throttled (below): a valid key is served whatever else its address sent, so
        // nobody can lock a team out by sending made-up keys from, or as, the team's address.
        const secret = bearerSecret(req.header("authorization"));
        if (!secret) throw new QuiesceError("unauthenticated", "missing bearer token: send Authorization: Bearer <api key>");
        // Checked before the body is read: a caller that is not even holding a key-shaped secret
        // gets nothing from us but this answer.
        if (!KEY_FORM.test(secret)) throw new QuiesceError("unauthenticated", "invalid, revoked or expired api key");
        keyHash = hashKeySecret(secret);
        if (auth === "key") {
          principal = await cachedAuthenticateKey(secret, keyHash);
          if (!principal) throw new QuiesceError("unauthenticated", "invalid, revoked or expired api key");
        }
      }
      for (const name in params) {
        const value = params[name]!;
        const unsafe = findUnsafeText(value, `params.${name}`);
        if (unsafe) throw badRequest(`${unsafe.field}: ${unsafe.message}`);
        if (value.length > 200) throw badRequest(`params.${name}: longer than 200 characters`);
      }
      let body: unknown = undefined;
      if (spec.body) {
        checkDeclaredLength(req);
        const parsed = spec.body.safeParse(await readJsonBody(req));
        if (!parsed.success) throw zodToBadRequest(parsed.error, "body");
        body = parsed.data;
      }
      let query: unknown = undefined;
      if (spec.query) {
        const url = req.url();
        if (!url) throw badRequest("url: malformed");
        const raw = queryObject(url);
        const unsafe = findUnsafeText(raw, "query");
        if (unsafe) throw badRequest(`${unsafe.field}: ${unsafe.message}`);
        const parsed = spec.query.safeParse(raw);
        if (!parsed.success) throw zodToBadRequest(parsed.error, "query");
        query = parsed.data;
      }
      const args = {
        principal,
        keyHash,
        body,
        query,
        params,
        header: (name: string) => req.header(name),
        requestId,
        log,
        get req() {
          return req.request();
        },
      };
      const pass: QuotaPass | null = spec.quota && principal ? await spec.quota.enter(principal, { params, body: body as never }) : null;
      let result: RouteResult;
      try {
        result = await handler(args as unknown as RouteArgs<B, Q, A>);
      } catch (err) {
        await pass?.done(!(err instanceof QuiesceError && refusedUnchanged(err.httpStatus)));
        throw err;
      }
      if (result instanceof Response) {
        if (!pass) return done(result);
        if (refusedUnchanged(result.status) || !result.body) {
          await pass.done(!refusedUnchanged(result.status));
          return done(result);
        }
        return done(onBodyEnd(result, () => void pass.done(true)));
      }
      await pass?.done(!refusedUnchanged(result.status ?? 200));
      return done({ status: result.status ?? 200, json: result.json, headers: result.headers });
    } catch (err) {
      if (!(err instanceof QuiesceError)) log.error({ err }, "unhandled error");
      let e = asQuiesceError(err);
      // Every bad key counts against its source address (kept in PostgreSQL); past the free
      // allowance that address's bad keys are answered 429 with the wait. While this process knows of
      // the block, it answers without another write.
      if (e.code === "unauthenticated" && auth !== "none" && req.header("authorization") !== null) {
        const address = req.clientAddress();
        const wait = badKeyWait(address) || (await recordBadKey(address).catch(() => 0));
        if (wait > 0) e = rateLimited(wait);
      }
      return done(errorAnswer(e));
    }
  };

  const web = (async (req: Request, ctx: RouteContext) => {
    const answer = await core(fromWebRequest(req), (await ctx?.params) ?? {});
    return answer instanceof Response ? answer : jsonResponse(answer.status, answer.json, answer.headers);
  }) as RouteHandler;
  web.apiCore = core;
  return web;
}
