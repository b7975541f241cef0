// Webhook pieces that need no network: the signature header, the backoff, the URL rules, CloudEvents.
import fc from "fast-check";
import { expect, test } from "vitest";
import { cloudEvent, refuseEndpointUrl, retryDelayMs, signWebhook, verifyWebhookSignature } from "./events";

test("the signature covers the timestamp and the body; old timestamps and changed bodies fail", () => {
  fc.assert(
    fc.property(fc.string({ minLength: 16 }), fc.string(), fc.integer({ min: 1_000_000_000, max: 4_000_000_000 }), (secret, body, t) => {
      const h = signWebhook(secret, body, t);
      expect(h).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
      expect(verifyWebhookSignature(secret, body, h, t + 10)).toBe(true);
      expect(verifyWebhookSignature(secret, body + "x", h, t)).toBe(false);
      expect(verifyWebhookSignature(secret + "x", body, h, t)).toBe(false);
      expect(verifyWebhookSignature(secret, body, h, t + 301)).toBe(false);
      expect(verifyWebhookSignature(secret, body, h.replace(/^t=\d+/, `t=${t + 1}`), t)).toBe(false);
    }),
    { numRuns: 100 },
  );
  expect(verifyWebhookSignature("s".repeat(16), "b", null, 0)).toBe(false);
});

test("backoff doubles from the base and stops at the cap", () => {
  expect([1, 2, 3, 4, 5, 6].map((n) => retryDelayMs(n, 1000, 10_000))).toEqual([1000, 2000, 4000, 8000, 10_000, 10_000]);
  expect(retryDelayMs(500, 1000, 60_000)).toBe(60_000);
});

test("endpoint URL rules", () => {
  const self = ["http://localhost:3000", "https://quiesce.example.com"];
  expect(refuseEndpointUrl("https://hooks.example.com/x", self)).toBeNull();
  expect(refuseEndpointUrl("http://127.0.0.1:4000/x", self)).toBeNull();
  expect(refuseEndpointUrl("http://127.0.0.1:3000/api/v1/runs", self)).toMatch(/itself/);
  expect(refuseEndpointUrl("http://[::1]:3000/", self)).toMatch(/itself/);
  // Other spellings of this machine on the same port (the self-loop check used to compare spellings).
  for (const u of [
    "http://[::ffff:127.0.0.1]:3000/",
    "http://localhost.:3000/",
    "http://[::]:3000/",
    "http://0x7f.1:3000/",
    "http://127.0.0.2:3000/",
  ])
    expect(refuseEndpointUrl(u, self), u).toMatch(/itself/);
  expect(refuseEndpointUrl("https://QUIESCE.example.com./", self)).toMatch(/itself/);
  expect(refuseEndpointUrl("https://quiesce.example.com:443/", self)).toMatch(/itself/);
  expect(refuseEndpointUrl("gopher://x", self)).toMatch(/only http and https/);
  expect(refuseEndpointUrl("data:text/plain,hi", self)).toMatch(/only http and https/);
  expect(refuseEndpointUrl("https://a:b@x.test/", self)).toMatch(/credentials/);
  expect(refuseEndpointUrl("::", self)).toBe("not a URL");
});

test("CloudEvents 1.0 structured shape", () => {
  const e = cloudEvent({ id: "e1", teamId: "team_1", type: "run.killed", subject: "run_1", time: new Date(0), data: { a: 1 } });
  expect(e).toEqual({
    specversion: "1.0",
    id: "e1",
    source: "/quiesce/teams/team_1",
    type: "dev.quiesce.run.killed",
    subject: "run_1",
    time: "1970-01-01T00:00:00.000Z",
    datacontenttype: "application/json",
    data: { a: 1 },
  });
});
