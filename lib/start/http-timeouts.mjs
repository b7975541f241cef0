// How long a client may take to SEND a request, on the web app (`next start`) and the API process
// (lib/api/node-server.ts) alike: without bounds, Node gives a trickled body 300 s and headers 60 s per
// connection, so a few slow clients hold every socket. Receiving only: once the request is in, the
// answer (an event stream included) runs as long as it needs. docs/security/hardening.md#input.
// Plain JavaScript, because it is also preloaded into `next start` (node --import), which runs without tsx.
import http from "node:http";

/**
 * Options for http.createServer. Node looks at headersTimeout/requestTimeout only every
 * connectionsCheckingInterval (30 s by default), so that is tightened for the bounds to hold to a second.
 */
export function httpTimeoutOptions({ headersMs, requestMs }) {
  return { headersTimeout: Math.min(headersMs, requestMs), requestTimeout: requestMs, connectionsCheckingInterval: 1_000 };
}

/** Closes the connection of a request whose body sends nothing for `bodyIdleMs`, until the body has arrived. */
export function watchBodyIdle(server, bodyIdleMs) {
  server.on("request", (req, res) => {
    // Only a request that declares a body; a GET (an event stream) has nothing more to receive.
    const declared = req.headers["transfer-encoding"] !== undefined || Number(req.headers["content-length"]) > 0;
    if (req.complete || !declared) return;
    const socket = req.socket;
    // A body that has all arrived but that the handler has not read yet is not stalled.
    const stalled = () => (req.complete ? done() : socket.destroy());
    socket.setTimeout(bodyIdleMs);
    socket.on("timeout", stalled);
    const done = () => {
      socket.off("timeout", stalled);
      // An answer already sent has set Node's own keep-alive timer on the socket: leave that one.
      if (!res.writableEnded) socket.setTimeout(0);
    };
    req.once("end", done);
    res.once("close", done);
  });
}

/** Every http server made after this call gets the bounds (the preload below, for `next start`'s server). */
export function boundEveryServer(t) {
  const original = http.createServer;
  http.createServer = function createServer(opts, listener) {
    if (typeof opts === "function") [opts, listener] = [{}, opts];
    const server = original.call(this, { ...(opts ?? {}), ...httpTimeoutOptions(t) }, listener);
    watchBodyIdle(server, t.bodyIdleMs);
    return server;
  };
}

// Preloaded as `node --import …/http-timeouts.mjs?headers=…&request=…&idle=…`: lib/start/plan.ts reads
// the settings (lib/platform/config) and passes them in the URL, so this file reads no environment itself.
const q = new URL(import.meta.url).searchParams;
if (q.has("request")) {
  boundEveryServer({ headersMs: Number(q.get("headers")), requestMs: Number(q.get("request")), bodyIdleMs: Number(q.get("idle")) });
}
