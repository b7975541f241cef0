// next-auth needs a stable secret to sign session cookies in production. Without NEXTAUTH_SECRET,
// `npm start` generates one on the first start and keeps it beside the data (mode 0600, git-ignored),
// so sessions survive restarts and nothing has to be configured.
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { setting } from "../platform/config";

export function authSecretPath(): string {
  return path.resolve(setting("QUIESCE_DATA_DIR"), "auth-secret");
}

export function ensureAuthSecret(file = authSecretPath()): { secret: string; source: "env" | "file" | "generated" } {
  const fromEnv = setting("NEXTAUTH_SECRET") ?? setting("AUTH_SECRET");
  if (fromEnv) return { secret: fromEnv, source: "env" };
  if (existsSync(file)) {
    const s = readFileSync(file, "utf8").trim();
    if (s.length >= 32) return { secret: s, source: "file" };
  }
  const secret = randomBytes(32).toString("base64url");
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, `${secret}\n`, { mode: 0o600 });
  return { secret, source: "generated" };
}
