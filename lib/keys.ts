// API key secrets: shown once, stored only as a sha256 hash (docs/architecture.md#security). High-entropy random
// secrets need no slow hash; sha256 lets the gate look a key up by hash in its single statement.
import { createHash, randomBytes } from "node:crypto";
import type { KeyKind } from "./control/types";

export function newKeySecret(kind: KeyKind): string {
  return `qk_${kind}_${randomBytes(32).toString("base64url")}`;
}

export function hashKeySecret(secret: string): string {
  return createHash("sha256").update(secret, "utf8").digest("hex");
}

/** Reads `Authorization: Bearer <secret>`; null when absent or malformed. */
export function bearerSecret(authorization: string | null | undefined): string | null {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? "");
  return m?.[1] ?? null;
}
