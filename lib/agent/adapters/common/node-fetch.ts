// A minimal `fetch` over node:http / node:https for short-lived adapter processes: Node's global fetch
// loads undici on first use, a cost a hook process (one per tool call) would pay before its only
// request. Supports what lib/agent/sdk/client.ts uses: method, headers, a string body, an AbortSignal,
// and a response with ok, status and text(). node:https (and with it TLS) is loaded only for an
// https URL.
import http from "node:http";

export const nodeFetch = (async (input: string | URL, init: RequestInit = {}): Promise<Response> => {
  const url = new URL(String(input));
  const lib = url.protocol === "https:" ? await import("node:https") : url.protocol === "http:" ? http : null;
  if (!lib) throw new TypeError(`unsupported protocol ${url.protocol}`);
  return new Promise((resolve, reject) => {
    const signal = init.signal ?? undefined;
    if (signal?.aborted) return reject(signal.reason ?? new Error("aborted"));
    const req = lib.request(
      url,
      { method: init.method ?? "GET", headers: init.headers as http.OutgoingHttpHeaders, signal, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("error", reject);
        res.on("end", () => {
          const body = Buffer.concat(chunks).toString("utf8");
          const status = res.statusCode ?? 0;
          resolve({ ok: status >= 200 && status < 300, status, text: async () => body } as unknown as Response);
        });
      },
    );
    req.on("error", reject);
    req.end(typeof init.body === "string" ? init.body : undefined);
  });
}) as typeof fetch;
