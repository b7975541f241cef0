// One way in for agents: the console's port answers /api/v1 by forwarding it to the API process
// (docs/deploy.md#the-api-process), so an integrator has one base URL and every call runs on the
// lighter server. The front has already decided the client's address (web-front.ts); it passes that on
// with the per-start secret, which the API process checks before it believes the address.
import http from "node:http";
import { FRONT_HEADER } from "../platform/security/client-address";

/** Connection-level headers (RFC 9110 §7.6.1): they describe one hop, never the next. */
const HOP_BY_HOP = ["connection", "keep-alive", "proxy-connection", "transfer-encoding", "te", "trailer", "upgrade"];

/** `/api/v1` and everything below it; nothing else goes to the API process. */
export function isAgentApiPath(url: string | undefined): boolean {
  return url !== undefined && /^\/api\/v1(?:[/?#]|$)/.test(url);
}

function withoutHopHeaders(headers: http.IncomingHttpHeaders): http.OutgoingHttpHeaders {
  const out: http.OutgoingHttpHeaders = { ...headers };
  const named = String(headers.connection ?? "")
    .split(",")
    .map((h) => h.trim().toLowerCase())
    .filter(Boolean);
  for (const h of [...HOP_BY_HOP, ...named]) delete out[h];
  return out;
}

export type Forward = (req: http.IncomingMessage, res: http.ServerResponse) => void;

/**
 * A handler that passes a request to `upstream` and its answer back, streamed both ways (event streams
 * reach the client chunk by chunk; a client that goes away ends the upstream call). The upstream down
 * answers 502 in the API's error shape.
 */
export function apiForwarder(upstream: string, secret: string): { forward: Forward; close(): void } {
  const target = new URL(upstream);
  // Kept-alive sockets: the forwarding costs one loopback hop, not a TCP handshake per call.
  const agent = new http.Agent({ keepAlive: true, maxSockets: 512 });
  const forward: Forward = (req, res) => {
    const headers = withoutHopHeaders(req.headers);
    headers[FRONT_HEADER] = secret;
    const up = http.request(
      { protocol: target.protocol, hostname: target.hostname, port: target.port, method: req.method, path: req.url, headers, agent },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, withoutHopHeaders(answer.headers));
        // Event streams: headers go now, not with the first chunk.
        if (String(answer.headers["content-type"] ?? "").startsWith("text/event-stream")) res.flushHeaders();
        answer.pipe(res);
        answer.once("error", () => res.destroy());
      },
    );
    up.once("error", (err) => {
      if (res.headersSent) return void res.destroy();
      const body = JSON.stringify({
        error: {
          code: "api_unavailable",
          message: `the API process does not answer (${(err as NodeJS.ErrnoException).code ?? err.message})`,
        },
      });
      res.writeHead(502, { "content-type": "application/json", "content-length": Buffer.byteLength(body), "retry-after": "1" });
      res.end(body);
    });
    res.once("close", () => {
      if (!res.writableFinished) up.destroy();
    });
    req.pipe(up);
  };
  return { forward, close: () => agent.destroy() };
}
