// Console passwords (docs/architecture.md#security): bcrypt, so a leaked users table does not hand out sign-ins.
// bcryptjs is pure JavaScript (no native build), which keeps `npm install` offline-safe.
import bcrypt from "bcryptjs";
import { setting } from "../config";

/** Cost 10 ≈ 50–100 ms per hash: slow for an attacker, fine for one sign-in. */
const ROUNDS = setting("QUIESCE_BCRYPT_ROUNDS");
/** bcrypt ignores bytes past 72; refuse them rather than silently accept a truncated password. */
const MAX_BYTES = 72;

export async function hashPassword(password: string): Promise<string> {
  if (typeof password !== "string" || password.length === 0) throw new Error("password must be a non-empty string");
  if (Buffer.byteLength(password, "utf8") > MAX_BYTES) throw new Error(`password must be at most ${MAX_BYTES} bytes`);
  return bcrypt.hash(password, ROUNDS);
}

/** false (never throws) for a wrong password, a missing hash or a malformed hash. */
export async function verifyPassword(password: string, hash: string | null | undefined): Promise<boolean> {
  if (!hash || typeof password !== "string" || password.length === 0) return false;
  if (Buffer.byteLength(password, "utf8") > MAX_BYTES) return false;
  try {
    return await bcrypt.compare(password, hash);
  } catch {
    return false;
  }
}
