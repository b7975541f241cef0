// The sign-in redirect target (from the hardening review): only same-origin paths survive,
// judged after the URL is normalised as a browser would.
import { describe, expect, test } from "vitest";
import fc from "fast-check";
import { safeCallbackUrl, safeRedirect } from "./callback-url";

const BASE = "https://console.example";

describe("safeCallbackUrl", () => {
  test.each([
    "/%09/evil.example",
    "/\t/evil.example",
    "/\r/evil.example",
    "/\n/evil.example",
    "//evil.example",
    "/\\evil.example",
    "\\/evil.example",
    "https://evil.example/runs",
    "javascript:alert(1)",
    "/runs\r\nSet-Cookie: x=1",
    "runs",
    "",
    "/signin?callbackUrl=/runs",
    "/./\\evil.example",
    "/ /evil.example".replace(" ", "\u0000"),
    "/api/auth/signout",
  ])("%j goes to /runs", (raw) => {
    const decoded = raw.startsWith("/%09") ? decodeURIComponent(raw) : raw;
    expect(safeCallbackUrl(decoded)).toBe("/runs");
  });

  test("same-site paths are kept, normalised", () => {
    expect(safeCallbackUrl("/receipts/bar_1?version=2#digest")).toBe("/receipts/bar_1?version=2#digest");
    expect(safeCallbackUrl("/runs/../audit")).toBe("/audit");
    expect(safeCallbackUrl(["/keys", "/x"])).toBe("/keys");
  });

  test("property: whatever comes in, the answer is a same-origin path a browser resolves to this site", () => {
    const hostile = fc.oneof(
      fc.string({ unit: "binary" }),
      fc
        .tuple(fc.constantFrom("/", "//", "/\\", "\\", "/\t/", "/%2F", "http:", ""), fc.string({ unit: "grapheme-ascii" }))
        .map(([a, b]) => a + b),
      fc.webUrl(),
    );
    fc.assert(
      fc.property(hostile, (raw) => {
        const out = safeCallbackUrl(raw);
        expect(out.startsWith("/")).toBe(true);
        expect(out.startsWith("//")).toBe(false);
        expect(new URL(out, BASE).origin).toBe(BASE);
        expect(/[\u0000-\u001f\u007f]/.test(out)).toBe(false);
      }),
      { numRuns: 2000 },
    );
  });
});

describe("safeRedirect (next-auth)", () => {
  test("another origin goes to the default page of this one", () => {
    expect(safeRedirect("https://evil.example/x", BASE)).toBe(`${BASE}/runs`);
    expect(safeRedirect("/audit", BASE)).toBe(`${BASE}/audit`);
    expect(safeRedirect(`${BASE}/keys`, BASE)).toBe(`${BASE}/keys`);
  });
});
