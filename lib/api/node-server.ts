// Serves every app/api/v1/**/route.ts module over plain node:http, WITHOUT Next: the machine API's own
// process (`quiesce api`, docs/deploy.md#the-api-process) and the in-process server the SDK, adapter,
// worker and barrier tests talk real HTTP to. The handlers are the very route modules `next start`
// serves (same lib/api/route.ts checks: key form, Content-Length, body limit, bad-key throttle,
// request id), so the OpenAPI document, the auth and the tests are the same; only the HTTP layer
// around them is lighter (docs/design/api-process.md). Route folders map to paths exactly as in the App
// Router: `[param]` is a path parameter, `[...rest]` a catch-all. Event streams are passed on chunk by
// chunk, and a client disconnect aborts `req.signal`.
import http from "node:http";
import { Readable } from "node:stream";
import { readdirSync, statSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import type { AddressInfo } from "node:net";
import { routeModules } from "./route-modules";
import { plainHeaders, type ApiCore, type ApiRequest } from "./route";
import { enableKeyCache, disableKeyCache } from "./key-cache";
import { controlListener } from "../modules/stop";
import { FRONT_HEADER, cameThroughFront, clientAddress, frontAddress, trustedProxies } from "../platform/security/client-address";
import { setting } from "../platform/config";
import { httpTimeoutOptions, watchBodyIdle } from "../start/http-timeouts.mjs";

type Handler = ((req: Request, ctx: { params: Promise<Record<string, string>> }) => Promise<Response> | Response) & { apiCore?: ApiCore };
type Seg = { kind: "static"; value: string } | { kind: "param"; name: string } | { kind: "rest"; name: string };
interface RouteEntry {
  file: string;
  segs: Seg[];
  module?: Promise<Record<string, unknown>>;
  /** The module once loaded (the hot path skips the await on an already settled promise). */
  loaded?: Record<string, unknown>;
}

const APP_DIR = path.resolve(import.meta.dirname, "../../app");
/** Bodies declared up to this size are passed on through a light stream (smallBodyStream); larger or
 * chunked ones through Readable.toWeb, which reads only as the handler pulls, so lib/api/route.ts can
 * refuse them before reading. */
const BUFFERED_BODY_BYTES = 64 * 1024;
const METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"];

function findRouteFiles(dir: string): string[] {
  const out: string[] = [];
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return out;
  }
  for (const name of names) {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) out.push(...findRouteFiles(full));
    else if (name === "route.ts") out.push(full);
  }
  return out;
}

function toSegments(file: string): Seg[] {
  const rel = path.relative(APP_DIR, path.dirname(file)).split(path.sep).filter(Boolean);
  // Route groups "(name)" do not appear in the URL.
  return rel
    .filter((s) => !/^\(.*\)$/.test(s))
    .map((s): Seg => {
      const rest = /^\[\.\.\.(.+)\]$/.exec(s);
      if (rest) return { kind: "rest", name: rest[1]! };
      const param = /^\[(.+)\]$/.exec(s);
      if (param) return { kind: "param", name: param[1]! };
      return { kind: "static", value: s };
    });
}

/** Static segments outrank parameters, which outrank catch-alls (as in Next). */
function specificity(segs: Seg[]): number[] {
  return segs.map((s) => (s.kind === "static" ? 0 : s.kind === "param" ? 1 : 2));
}

function compareRoutes(a: RouteEntry, b: RouteEntry): number {
  const sa = specificity(a.segs),
    sb = specificity(b.segs);
  for (let i = 0; i < Math.max(sa.length, sb.length); i++) {
    const x = sa[i] ?? -1,
      y = sb[i] ?? -1;
    if (x !== y) return x - y;
  }
  return 0;
}

function match(segs: Seg[], parts: string[]): Record<string, string> | null {
  const params: Record<string, string> = {};
  for (let i = 0; i < segs.length; i++) {
    const s = segs[i]!;
    if (s.kind === "rest") {
      if (i >= parts.length) return null;
      params[s.name] = parts.slice(i).join("/");
      return params;
    }
    const p = parts[i];
    if (p === undefined) return null;
    if (s.kind === "static" && s.value !== p) return null;
    if (s.kind === "param") params[s.name] = p;
  }
  return segs.length === parts.length ? params : null;
}

function sendJson(res: http.ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json; charset=utf-8" });
  res.end(JSON.stringify(body));
}

export interface ApiServer {
  url: string;
  close(): Promise<void>;
}

/**
 * A small body as a web stream fed straight from the socket's events: cheaper than Readable.toWeb, and
 * never awaited here, so a handler that refuses the request (bad key, too large) still answers before
 * the body has arrived. Bounded by BUFFERED_BODY_BYTES (the declared length), so nothing piles up.
 */
function smallBodyStream(req: http.IncomingMessage): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>({
    start(controller) {
      req.on("data", (c: Buffer) => controller.enqueue(new Uint8Array(c.buffer, c.byteOffset, c.byteLength)));
      req.once("end", () => controller.close());
      req.once("error", (err) => controller.error(err));
    },
    cancel() {
      req.resume();
    },
  });
}

function webHeaders(req: http.IncomingMessage): Headers {
  const headers = new Headers();
  for (const [k, v] of Object.entries(req.headers)) {
    if (k === FRONT_HEADER) continue; // the front's secret is for this server, not for handlers
    if (Array.isArray(v)) v.forEach((x) => headers.append(k, x));
    else if (v !== undefined) headers.set(k, v);
  }
  return headers;
}

/**
 * Reads a body as UTF-8 text up to `limit` bytes. Past the limit it stops reading (pauses the socket)
 * and answers null: the connection is closed after the refusal, since the rest is still on its way.
 */
function collectBody(req: http.IncomingMessage, limit: number): Promise<string | null> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let bytes = 0;
    const onData = (c: Buffer) => {
      bytes += c.length;
      if (bytes > limit) {
        req.off("data", onData);
        req.pause();
        resolve(null);
      } else chunks.push(c);
    };
    req.on("data", onData);
    req.once("end", () => resolve(Buffer.concat(chunks, bytes).toString("utf8")));
    req.once("error", reject);
  });
}

/** node:http's request as lib/api/route.ts's ApiRequest. */
function nodeApiRequest(
  req: http.IncomingMessage,
  url: URL,
  method: string,
  hasBody: boolean,
  small: boolean,
  signal: () => AbortSignal,
): ApiRequest {
  // A small body is taken off the socket at once (it is already there, or nearly), as smallBodyStream
  // does: a refusal that never reads it still leaves the connection reusable.
  const header = (name: string): string | null => {
    const v = req.headers[name];
    return v === undefined ? null : Array.isArray(v) ? v.join(", ") : v;
  };
  let body: Promise<string | null> | undefined;
  if (small) {
    body = collectBody(req, BUFFERED_BODY_BYTES);
    body.catch(() => undefined);
  }
  return {
    method,
    url: () => url,
    header,
    // Through the console's front: the address it decided; otherwise the socket's peer, a forwarding
    // header only from a trusted proxy (docs/security/identity.md#the-source-address).
    clientAddress: () =>
      cameThroughFront(header(FRONT_HEADER), setting("QUIESCE_FRONT_SECRET"))
        ? frontAddress({ get: header })
        : clientAddress({
            peer: req.socket.remoteAddress,
            header,
            trusted: trustedProxies(setting("QUIESCE_TRUSTED_PROXIES")),
            use: setting("QUIESCE_FORWARDED_HEADER"),
          }),
    bodyText: (limit) => (hasBody ? (body ??= collectBody(req, limit)) : Promise.resolve("")),
    request: () => new Request(url, { method, headers: webHeaders(req), signal: signal() }),
  };
}

export interface ApiServerOptions {
  port?: number;
  host?: string;
  /** More app/ folders to serve beside api/, e.g. "metrics" and ".well-known". */
  also?: string[];
  /** The app/ folder whose api route modules (route.ts files) are served (default: this checkout's). */
  appDir?: string;
  /**
   * Cache verified API keys this long at most (lib/api/key-cache.ts; 0 or unset: no cache). The API
   * process passes QUIESCE_API_KEY_CACHE_MS; the in-process test servers read every key.
   */
  keyCacheMs?: number;
  /** Called with a handler's unexpected error or a route module that fails to load. */
  onError?: (message: string, err: unknown) => void;
}

export async function startApiServer(opts: ApiServerOptions = {}): Promise<ApiServer> {
  const onError = opts.onError ?? ((message: string, err: unknown) => console.error(`[api-server] ${message}`, err));
  const routes: RouteEntry[] = ["api", ...(opts.also ?? [])]
    .flatMap((d) => findRouteFiles(path.join(opts.appDir ?? APP_DIR, d)))
    .map((file) => ({ file, segs: toSegments(file) }))
    .sort(compareRoutes);
  // In the prebuilt CLI the route modules are bundled: load them from its table, not from the .ts files.
  const table = routeModules && path.resolve(opts.appDir ?? APP_DIR) === APP_DIR ? routeModules : undefined;
  const load = (r: RouteEntry) =>
    (r.module ??= (table?.[path.relative(APP_DIR, r.file).split(path.sep).join("/")]?.() ?? import(pathToFileURL(r.file).href)) as Promise<
      Record<string, unknown>
    >);

  if (opts.keyCacheMs) {
    try {
      await enableKeyCache(opts.keyCacheMs, controlListener());
    } catch (err) {
      // Without its LISTEN connection the cache cannot learn of a revocation: serve without it.
      onError("API key cache off: cannot LISTEN for revocations", err);
    }
  }

  // How long a client may take to send a request (lib/start/http-timeouts.mjs).
  const timeouts = {
    headersMs: setting("QUIESCE_HTTP_HEADERS_TIMEOUT_MS"),
    requestMs: setting("QUIESCE_HTTP_REQUEST_TIMEOUT_MS"),
    bodyIdleMs: setting("QUIESCE_HTTP_BODY_IDLE_MS"),
  };
  const server = http.createServer(httpTimeoutOptions(timeouts), async (req, res) => {
    // A client that goes away aborts the request's signal. The controller is made only when a handler
    // asks for the signal (event streams, Web-Request handlers): the gate's answers never do, and a
    // controller per call is a cost on the hot path.
    let abort: AbortController | null = null;
    let gone = false;
    const signal = (): AbortSignal => {
      abort ??= new AbortController();
      if (gone && !abort.signal.aborted) abort.abort();
      return abort.signal;
    };
    res.on("close", () => {
      if (res.writableFinished) return;
      gone = true;
      abort?.abort();
    });
    try {
      const host = opts.host ?? "127.0.0.1";
      const url = new URL(req.url ?? "/", `http://${req.headers.host ?? host}`);
      let parts: string[];
      try {
        parts = url.pathname
          .split("/")
          .filter(Boolean)
          .map((p) => decodeURIComponent(p));
      } catch {
        // As Next answers a path whose percent-encoding is not UTF-8.
        return sendJson(res, 400, { error: { code: "bad_request", message: "params: malformed percent-encoding in the path" } });
      }
      let found: { route: RouteEntry; params: Record<string, string> } | null = null;
      for (const route of routes) {
        const params = match(route.segs, parts);
        if (params) {
          found = { route, params };
          break;
        }
      }
      if (!found) return sendJson(res, 404, { error: { code: "not_found", message: `no route for ${url.pathname}` } });
      const method = (req.method ?? "GET").toUpperCase();
      let mod: Record<string, unknown>;
      try {
        mod = found.route.loaded ??= await load(found.route);
      } catch (err) {
        onError(`cannot load ${found.route.file}`, err);
        return sendJson(res, 500, { error: { code: "internal", message: `route module failed to load: ${(err as Error).message}` } });
      }
      const handler = mod[method] as Handler | undefined;
      if (typeof handler !== "function") {
        res.setHeader("allow", METHODS.filter((m) => typeof mod[m] === "function").join(", "));
        return sendJson(res, 405, { error: { code: "method_not_allowed", message: `${method} not allowed on ${url.pathname}` } });
      }
      // The body is handed over as a stream, as Next does: a handler may answer before reading it.
      const hasBody =
        method !== "GET" && method !== "HEAD" && (req.headers["content-length"] !== "0" || req.headers["transfer-encoding"] !== undefined);
      const declared = Number(req.headers["content-length"]);
      const small =
        hasBody && req.headers["transfer-encoding"] === undefined && Number.isInteger(declared) && declared <= BUFFERED_BODY_BYTES;
      let response: Response;
      if (handler.apiCore) {
        // An apiRoute handler: the same checks and handler, fed from node:http directly and answered
        // with a plain JSON write — no Web Request, Headers or Response per call (docs/design/api-process.md).
        const answer = await handler.apiCore(nodeApiRequest(req, url, method, hasBody, small, signal), found.params);
        if (!(answer instanceof Response)) {
          const text = JSON.stringify(answer.json);
          const out: Record<string, string> = plainHeaders(answer);
          out["content-length"] = String(Buffer.byteLength(text));
          if (hasBody && !req.complete) {
            out.connection = "close";
            res.once("finish", () => req.socket.destroy());
          }
          res.writeHead(answer.status, out);
          return void res.end(method === "HEAD" ? undefined : text);
        }
        response = answer;
      } else {
        const headers = webHeaders(req);
        const request = new Request(url, {
          method,
          headers,
          signal: signal(),
          ...(small
            ? { body: smallBodyStream(req), duplex: "half" }
            : hasBody
              ? { body: Readable.toWeb(req) as ReadableStream<Uint8Array>, duplex: "half" }
              : {}),
        } as RequestInit);
        response = await handler(request, { params: Promise.resolve(found.params) });
      }
      const outHeaders: Record<string, string | string[]> = {};
      response.headers.forEach((v, k) => {
        if (k === "set-cookie") return;
        outHeaders[k] = v;
      });
      const cookies = response.headers.getSetCookie?.() ?? [];
      if (cookies.length) outHeaders["set-cookie"] = cookies;
      // Answered before the body was read to the end (a refusal): this connection cannot carry another
      // request, because the rest of that body is still on its way; close it after the answer.
      const unread = hasBody && !req.complete;
      if (unread) {
        outHeaders.connection = "close";
        res.once("finish", () => req.socket.destroy());
      }
      if (!response.body || method === "HEAD") {
        res.writeHead(response.status, outHeaders);
        return void res.end();
      }
      if (!response.headers.get("content-type")?.startsWith("text/event-stream")) {
        // An ordinary answer: one buffer, one write (the hot path's JSON is a few hundred bytes).
        const buf = Buffer.from(await response.arrayBuffer());
        outHeaders["content-length"] = String(buf.byteLength);
        res.writeHead(response.status, outHeaders);
        return void res.end(buf);
      }
      res.writeHead(response.status, outHeaders);
      res.flushHeaders();
      const reader = response.body.getReader();
      const stop = () => void reader.cancel().catch(() => {});
      const sig = signal();
      if (sig.aborted) stop();
      else sig.addEventListener("abort", stop, { once: true });
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        if (!res.write(value)) await new Promise<void>((r) => res.once("drain", () => r()));
      }
      res.end();
    } catch (err) {
      if (gone) return;
      onError("handler threw", err);
      if (!res.headersSent) sendJson(res, 500, { error: { code: "internal", message: "internal error" } });
      else res.destroy(err as Error);
    }
  });

  // Idle keep-alive sockets must be closed by the client (undici: ~4 s), never by the server first:
  // a server that closes a socket the client is just reusing causes spurious ECONNRESETs.
  server.keepAliveTimeout = 65_000;
  watchBodyIdle(server, timeouts.bodyIdleMs);
  const host = opts.host ?? "127.0.0.1";
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port ?? 0, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${host}:${port}`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        if (opts.keyCacheMs) disableKeyCache();
        server.close((err) => (err ? reject(err) : resolve()));
        // Long-lived streams (server-sent events) would hold close() forever.
        server.closeAllConnections();
      }),
  };
}
