// API key secrets: shown once, stored only as a sha256 hash (docs/architecture.md#security). High-entropy random
// secrets need no slow hash; sha256 lets the gate look a key up by hash in its single statement.
import { hash, randomBytes } from "node:crypto";
import type { KeyKind } from "../../control/types";

export function newKeySecret(kind: KeyKind): string {
  return `qk_${kind}_${randomBytes(32).toString("base64url")}`;
}

export function hashKeySecret(secret: string): string {
  // The one-shot form: no Hash object per call (every authenticated request hashes its key).
  return hash("sha256", secret, "hex");
}

/** Reads `Authorization: Bearer <secret>`; null when absent or malformed. */
export function bearerSecret(authorization: string | null | undefined): string | null {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? "");
  return m?.[1] ?? null;
}
