// The web app's front (lib/start/web-front.ts) over real sockets: what reaches Next is the address
// decided from the socket — an untrusted peer's forwarding headers are dropped, a trusted proxy's
// X-Forwarded-For is resolved to one address. Here the front hands requests to a handler that echoes
// the headers it got; the same front with Next behind it runs in the browser tests
// (e2e/security/hardening.spec.ts).
import http from "node:http";
import { afterAll, beforeAll, expect, test } from "vitest";
import { startWebFront, type WebFront } from "../../lib/start/web-front";

let front: WebFront;
beforeAll(async () => {
  front = await startWebFront({
    port: 0,
    host: "127.0.0.1",
    dir: ".",
    handler: (req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify(req.headers));
    },
  });
});
afterAll(async () => {
  delete process.env.QUIESCE_TRUSTED_PROXIES;
  await front?.close();
});

function seen(from: string, headers: Record<string, string>): Promise<Record<string, string>> {
  return new Promise((resolve, reject) => {
    const req = http.request(front.url, { localAddress: from, agent: false, headers }, (res) => {
      let text = "";
      res.on("data", (c: Buffer) => (text += c.toString()));
      res.on("end", () => resolve(JSON.parse(text) as Record<string, string>));
    });
    req.on("error", reject);
    req.end();
  });
}

const spoof = {
  "x-forwarded-for": "203.0.113.77",
  forwarded: "for=203.0.113.78",
  "x-real-ip": "203.0.113.79",
  "x-forwarded-host": "evil.example",
  "x-forwarded-proto": "https",
};

test("an untrusted peer: its own address, and none of its forwarding headers reach Next", async () => {
  process.env.QUIESCE_TRUSTED_PROXIES = "";
  const h = await seen("127.0.0.2", spoof);
  expect(h["x-forwarded-for"]).toBe("127.0.0.2");
  for (const name of ["forwarded", "x-real-ip", "x-forwarded-host", "x-forwarded-proto"]) expect(h[name]).toBeUndefined();
});

test("a trusted proxy: X-Forwarded-For resolved to the client, its host and proto kept; other peers still speak for themselves", async () => {
  process.env.QUIESCE_TRUSTED_PROXIES = "127.0.0.3";
  const viaProxy = await seen("127.0.0.3", { ...spoof, "x-forwarded-for": "192.0.2.1, ::ffff:198.51.100.20" });
  expect(viaProxy["x-forwarded-for"]).toBe("198.51.100.20");
  expect(viaProxy["x-forwarded-proto"]).toBe("https");
  expect(viaProxy["x-forwarded-host"]).toBe("evil.example");
  expect(viaProxy.forwarded).toBeUndefined();
  expect(viaProxy["x-real-ip"]).toBeUndefined();
  expect((await seen("127.0.0.4", spoof))["x-forwarded-for"]).toBe("127.0.0.4");
});
