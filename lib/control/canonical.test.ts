import { expect, test } from "vitest";
import fc from "fast-check";
import { canonicalJson, digestOf, sha256Hex } from "./canonical";

const jsonValue = fc.jsonValue({ maxDepth: 4 });

test("canonical JSON parses back to the same value and has no insignificant whitespace", () => {
  fc.assert(
    fc.property(jsonValue, (v) => {
      const text = canonicalJson(v);
      expect(JSON.parse(text)).toEqual(JSON.parse(JSON.stringify(v)));
      expect(text).toBe(canonicalJson(JSON.parse(text)));
    }),
  );
});

test("key order does not change the canonical form; keys come out sorted", () => {
  fc.assert(
    fc.property(fc.dictionary(fc.string(), fc.integer()), (obj) => {
      const reversed = Object.fromEntries(Object.entries(obj).reverse());
      expect(canonicalJson(reversed)).toBe(canonicalJson(obj));
      // Read the keys from the text itself (JS objects put integer-like keys first).
      const keys = Object.keys(obj).sort();
      expect(canonicalJson(obj)).toBe(`{${keys.map((k) => `${JSON.stringify(k)}:${obj[k]}`).join(",")}}`);
    }),
  );
  expect(canonicalJson({ b: 1, a: [true, null, "x"], c: { z: 1, y: 2 } })).toBe('{"a":[true,null,"x"],"b":1,"c":{"y":2,"z":1}}');
});

test("the digest ignores the digest member and changes with any other member", () => {
  fc.assert(
    fc.property(
      fc.dictionary(
        fc.string().filter((k) => k !== "digest"),
        fc.integer(),
        { minKeys: 1 },
      ),
      fc.string(),
      (body, fake) => {
        const a = digestOf(body);
        expect(digestOf({ ...body, digest: fake })).toEqual(a);
        expect(a.digest).toBe(sha256Hex(a.canonical));
        const k = Object.keys(body)[0]!;
        expect(digestOf({ ...body, [k]: (body[k] ?? 0) + 1 }).digest).not.toBe(a.digest);
      },
    ),
  );
});

test("non-finite numbers are refused rather than silently changed", () => {
  expect(() => canonicalJson({ a: Number.NaN })).toThrow(/non-finite/);
});

test("RFC 8785 vectors: number forms, code-unit key order, string escapes", () => {
  // From RFC 8785 §3.2.2 / appendix B: ECMAScript number serialization and UTF-16 key order.
  expect(canonicalJson({ numbers: [333333333.33333329, 1e30, 4.5, 2e-3, 0.000000000000000000000000001] })).toBe(
    '{"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27]}',
  );
  expect(canonicalJson({ "\u20ac": 1, "\r": 2, "\ud83d\ude00": 3, "\u00f6": 4, "1": 5 })).toBe('{"\\r":2,"1":5,"ö":4,"€":1,"😀":3}');
  expect(canonicalJson({ s: '\u0000\u001f"\\/\u2028' })).toBe('{"s":"\\u0000\\u001f\\"\\\\/\u2028"}');
  expect(canonicalJson({ d: new Date("2026-08-16T10:51:04.018Z"), u: undefined })).toBe('{"d":"2026-08-16T10:51:04.018Z"}');
  expect(() => canonicalJson({ s: "\ud800" })).toThrow(/surrogate/i);
});
