import { expect, test } from "vitest";
import fc from "fast-check";
import { canonicalJson, digestOf, sha256Hex } from "./canonical";

const jsonValue = fc.jsonValue({ maxDepth: 4 });

test("canonical JSON parses back to the same value and has no insignificant whitespace", () => {
  fc.assert(fc.property(jsonValue, (v) => {
    const text = canonicalJson(v);
    expect(JSON.parse(text)).toEqual(JSON.parse(JSON.stringify(v)));
    expect(text).toBe(canonicalJson(JSON.parse(text)));
  }));
});

test("key order does not change the canonical form; keys come out sorted", () => {
  fc.assert(fc.property(fc.dictionary(fc.string(), fc.integer()), (obj) => {
    const reversed = Object.fromEntries(Object.entries(obj).reverse());
    expect(canonicalJson(reversed)).toBe(canonicalJson(obj));
    // Read the keys from the text itself (JS objects put integer-like keys first).
    const keys = Object.keys(obj).sort();
    expect(canonicalJson(obj)).toBe(`{${keys.map((k) => `${JSON.stringify(k)}:${obj[k]}`).join(",")}}`);
  }));
  expect(canonicalJson({ b: 1, a: [true, null, "x"], c: { z: 1, y: 2 } })).toBe('{"a":[true,null,"x"],"b":1,"c":{"y":2,"z":1}}');
});

test("the digest ignores the digest member and changes with any other member", () => {
  fc.assert(fc.property(fc.dictionary(fc.string().filter((k) => k !== "digest"), fc.integer(), { minKeys: 1 }), fc.string(), (body, fake) => {
    const a = digestOf(body);
    expect(digestOf({ ...body, digest: fake })).toEqual(a);
    expect(a.digest).toBe(sha256Hex(a.canonical));
    const k = Object.keys(body)[0]!;
    expect(digestOf({ ...body, [k]: (body[k] ?? 0) + 1 }).digest).not.toBe(a.digest);
  }));
});

test("non-finite numbers are refused rather than silently changed", () => {
  expect(() => canonicalJson({ a: Number.NaN })).toThrow(/non-finite/);
});
