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
  | "clm"
  | "eff"
  | "rec"
  | "unc"
  | "rcpt"
  | "prov"
  | "whk"
  | "scope"
  | "view";

// Random bytes are drawn from the CSPRNG a page at a time and each id takes its own 12 bytes, never
// reused: a call to the CSPRNG per id costs far more than a slice of the page, and the gate's hot path
// makes an id per decision (docs/design/ids-from-a-page.md).
const POOL_BYTES = 12 * 341;
let pool = Buffer.alloc(0);
let offset = 0;

export function newId(prefix: IdPrefix): string {
  if (offset + 12 > pool.length) {
    pool = randomBytes(POOL_BYTES);
    offset = 0;
  }
  const id = pool.toString("base64url", offset, offset + 12);
  offset += 12;
  return `${prefix}_${id}`;
}
