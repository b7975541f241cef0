// Canonical JSON for stop receipts (docs/architecture.md#the-stop-receipt): object keys sorted by code point, no whitespace,
// arrays in their given order, `undefined` members dropped. Two parties who hold the same receipt
// produce the same bytes, so a sha256 over this text is a digest anyone can recompute.
// Pure: no clock, no I/O (hashing is a computation).
import { createHash } from "node:crypto";

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

export function canonicalJson(value: unknown): string {
  return encode(value);
}

function encode(value: unknown): string {
  if (value === null || value === undefined) return "null";
  if (typeof value === "number") {
    // JSON has no NaN/Infinity; a receipt carrying one is a bug upstream, not something to hide.
    if (!Number.isFinite(value)) throw new TypeError("canonicalJson: non-finite number");
    return JSON.stringify(value);
  }
  if (typeof value === "boolean" || typeof value === "string") return JSON.stringify(value);
  if (value instanceof Date) return JSON.stringify(value.toISOString());
  if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? "null" : encode(v))).join(",")}]`;
  if (typeof value === "object") {
    const entries = Object.keys(value as Record<string, unknown>)
      .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${encode((value as Record<string, unknown>)[k])}`);
    return `{${entries.join(",")}}`;
  }
  throw new TypeError(`canonicalJson: unsupported value of type ${typeof value}`);
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
