// The one way a webhook is sent: a POST that connects to exactly the addresses lib/modules/webhooks/target
// judged, through the `lookup` option of node:http, so no second resolution can happen between the check
// and the connection (DNS rebinding). Redirects are never followed: a 3xx is a failed attempt like any non-2xx.
import "server-only";
import http from "node:http";
import https from "node:https";
import type { LookupFunction } from "node:net";
import type { ResolvedAddress } from "../../platform/security/outbound";

/**
 * POSTs `body` to `u`, connecting only to `addresses` (already judged), and answers the HTTP status.
 * Rejects on anything short of a status line: refused, reset, timeout, TLS failure, not HTTP.
 */
export function postPinned(
  u: URL,
  addresses: readonly ResolvedAddress[],
  headers: Record<string, string>,
  body: string,
  signal: AbortSignal,
): Promise<number> {
  // net.connect asks this instead of the resolver (for a name; an address literal needs no lookup and is
  // the address that was judged).
  const lookup: LookupFunction = (_hostname, options, callback) => {
    const fit = addresses.filter((a) => !options.family || a.family === options.family);
    if (fit.length === 0) return callback(Object.assign(new Error("no judged address of that family"), { code: "ENOTFOUND" }), "", 0);
    if (options.all)
      callback(
        null,
        fit.map((a) => ({ address: a.address, family: a.family })),
      );
    else callback(null, fit[0]!.address, fit[0]!.family);
  };
  const send = u.protocol === "https:" ? https.request : http.request;
  return new Promise<number>((resolve, reject) => {
    const req = send(
      u,
      {
        method: "POST",
        // A fresh connection per delivery: a pooled socket must not carry a request past its own check.
        agent: false,
        lookup,
        signal,
        headers: { ...headers, "content-length": String(Buffer.byteLength(body)) },
      },
      (res) => {
        resolve(res.statusCode ?? 0);
        res.destroy();
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}
