// The web app's own front: the node:http server `npm start` runs Next behind, in the same process
// (Next's custom-server API), so that route handlers, server actions and next-auth learn where a request
// came from. Next itself only fills X-Forwarded-For from the socket when the request carries none, and
// hands its handlers headers, never the socket — so a client could name any address. Here each request's
// address is decided from the socket (lib/platform/security/client-address.ts, believing a forwarding header only
// from QUIESCE_TRUSTED_PROXIES) and written as the only X-Forwarded-For entry before Next sees it
// (docs/security/identity.md#the-source-address).
import http from "node:http";
import type { AddressInfo } from "node:net";
import { FRONT_HEADER, clientAddress, normalizeAddress, trustedProxies } from "../platform/security/client-address";
import { setting } from "../platform/config";
import { httpTimeoutOptions, watchBodyIdle } from "./http-timeouts.mjs";
import { apiForwarder, isAgentApiPath } from "./api-forward";

/** Forwarding headers a client may send; only the address decided here reaches Next. */
const FORWARDING = ["forwarded", "x-forwarded-for", "x-real-ip", "x-forwarded-host", "x-forwarded-proto", "x-forwarded-port", FRONT_HEADER];

/**
 * Decides the request's address and rewrites its headers in place: X-Forwarded-For becomes that one
 * address; Forwarded and X-Real-IP go; the other X-Forwarded-* headers are kept only from a trusted proxy.
 */
export function stampClientAddress(req: http.IncomingMessage): string {
  const trusted = trustedProxies(setting("QUIESCE_TRUSTED_PROXIES"));
  const header = (name: string): string | undefined => {
    const v = req.headers[name];
    return Array.isArray(v) ? v.join(", ") : v;
  };
  const address = clientAddress({ peer: req.socket.remoteAddress, header, trusted, use: setting("QUIESCE_FORWARDED_HEADER") });
  const peer = normalizeAddress(req.socket.remoteAddress ?? "");
  const fromProxy = peer !== null && trusted.has(peer);
  for (const name of FORWARDING)
    if (!fromProxy || name === "forwarded" || name === "x-real-ip" || name === FRONT_HEADER) delete req.headers[name];
  req.headers["x-forwarded-for"] = address;
  return address;
}

export interface WebFront {
  url: string;
  close(): Promise<void>;
}

/**
 * Starts Next (a production build, or `dev`) behind the front on host:port. `handler` replaces Next
 * (tests of the front alone); by default it is Next's own request handler. With `api` (npm start sets
 * QUIESCE_API_UPSTREAM and QUIESCE_FRONT_SECRET), /api/v1 goes to the API process instead of Next.
 */
export async function startWebFront(opts: {
  port: number;
  host: string;
  dir: string;
  dev?: boolean;
  handler?: (req: http.IncomingMessage, res: http.ServerResponse) => unknown;
  api?: { upstream: string; secret: string };
}): Promise<WebFront> {
  let handle = opts.handler;
  let closeApp = async () => {};
  let upgrade: ((req: http.IncomingMessage, socket: import("node:stream").Duplex, head: Buffer) => unknown) | undefined;
  if (!handle) {
    const { default: next } = await import("next");
    const app = next({ dev: opts.dev ?? false, dir: opts.dir, hostname: opts.host, port: opts.port });
    await app.prepare();
    handle = app.getRequestHandler();
    upgrade = app.getUpgradeHandler();
    closeApp = () => app.close();
  }
  const h = handle;
  // How long a client may take to send a request, as on the API process (lib/start/http-timeouts.mjs).
  const bounds = {
    headersMs: setting("QUIESCE_HTTP_HEADERS_TIMEOUT_MS"),
    requestMs: setting("QUIESCE_HTTP_REQUEST_TIMEOUT_MS"),
    bodyIdleMs: setting("QUIESCE_HTTP_BODY_IDLE_MS"),
  };
  const api = opts.api ? apiForwarder(opts.api.upstream, opts.api.secret) : null;
  const server = http.createServer(httpTimeoutOptions(bounds), (req, res) => {
    stampClientAddress(req);
    if (api && isAgentApiPath(req.url)) return api.forward(req, res);
    void h(req, res);
  });
  watchBodyIdle(server, bounds.bodyIdleMs);
  if (upgrade) {
    const u = upgrade;
    server.on("upgrade", (req: http.IncomingMessage, socket, head: Buffer) => {
      stampClientAddress(req);
      void u(req, socket, head);
    });
  }
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port, opts.host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${opts.host.includes(":") ? `[${opts.host}]` : opts.host}:${port}`,
    close: async () => {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      api?.close();
      await closeApp();
    },
  };
}
