// The key that signs console session cookies. NEXTAUTH_SECRET wins; without it a random secret is
// generated once and kept in .quiesce/ (git-ignored, mode 0600), so the first `npm start` just works and
// sessions survive a restart. Every web process started from the same folder shares it.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { randomBytes } from "node:crypto";
import path from "node:path";
import { setting } from "../config";

// The same file `quiesce start` (lib/start/secret.ts) writes, so both agree without NEXTAUTH_SECRET.
const FILE = "auth-secret";

export function authSecret(dataDir = setting("QUIESCE_DATA_DIR")): string {
  const fromEnv = setting("NEXTAUTH_SECRET");
  if (fromEnv && fromEnv.length > 0) return fromEnv;
  const file = path.resolve(dataDir, FILE);
  if (existsSync(file)) {
    const kept = readFileSync(file, "utf8").trim();
    if (kept.length >= 32) return kept;
  }
  mkdirSync(path.dirname(file), { recursive: true });
  const secret = randomBytes(32).toString("base64url");
  // "wx" fails when another process created the file first; then read theirs so both agree.
  try {
    writeFileSync(file, secret + "\n", { mode: 0o600, flag: "wx" });
    return secret;
  } catch {
    return readFileSync(file, "utf8").trim();
  }
}
