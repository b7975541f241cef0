// Opaque, prefixed identifiers (docs/architecture.md#data): run_…, lease_…, op_…, stop_…
import { randomBytes } from "node:crypto";

export type IdPrefix =
  | "team"
  | "user"
  | "mem"
  | "key"
  | "run"
  | "lease"
  | "op"
  | "stop"
  | "set"
  | "eff"
  | "rec"
  | "unc"
  | "rcpt"
  | "prov"
  | "whk"
  | "scope"
  | "view";

export function newId(prefix: IdPrefix): string {
  return `${prefix}_${randomBytes(12).toString("base64url")}`;
}
