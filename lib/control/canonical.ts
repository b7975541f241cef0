// Canonical JSON for stop receipts and the audit chain: the JSON Canonicalization Scheme of RFC 8785
// (keys sorted by UTF-16 code units, ECMAScript number form, no whitespace), from the `canonicalize`
// package, the scheme's reference implementation. Two parties who hold the same receipt produce the
// same bytes, so a sha256 over this text is a digest anyone can recompute with any JCS library.
// Pure: no clock, no I/O (hashing is a computation).
import { createHash } from "node:crypto";
import canonicalize from "canonicalize";

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** RFC 8785 text of a JSON value. Non-finite numbers and lone surrogates are refused, never changed. */
export function canonicalJson(value: unknown): string {
  let text: string | undefined;
  try {
    text = canonicalize(value === undefined ? null : value);
  } catch (err) {
    const m = (err as Error).message;
    throw new TypeError(`canonicalJson: ${/NaN|Infinity/.test(m) ? "non-finite number" : m}`);
  }
  if (text === undefined) throw new TypeError("canonicalJson: value has no JSON form");
  return text;
}

export function sha256Hex(text: string): string {
  return createHash("sha256").update(text, "utf8").digest("hex");
}

/** The digest of a body: sha256 over its canonical form with the `digest` member left out. */
export function digestOf(body: Record<string, unknown>): { canonical: string; digest: string } {
  const { digest: _omit, ...rest } = body;
  const canonical = canonicalJson(rest);
  return { canonical, digest: sha256Hex(canonical) };
}
