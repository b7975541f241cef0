import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, expect, test } from "vitest";
import { ensureAuthSecret } from "./secret";

const dir = mkdtempSync(path.join(tmpdir(), "quiesce-secret-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test("the session secret is generated once, kept private, and reused; an env secret wins", () => {
  const saved = [process.env.NEXTAUTH_SECRET, process.env.AUTH_SECRET];
  delete process.env.NEXTAUTH_SECRET;
  delete process.env.AUTH_SECRET;
  try {
    const file = path.join(dir, "auth-secret");
    const first = ensureAuthSecret(file);
    expect(first.source).toBe("generated");
    expect(first.secret.length).toBeGreaterThanOrEqual(43);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readFileSync(file, "utf8").trim()).toBe(first.secret);
    expect(ensureAuthSecret(file)).toEqual({ secret: first.secret, source: "file" });
    process.env.NEXTAUTH_SECRET = "from-the-environment";
    expect(ensureAuthSecret(file)).toEqual({ secret: "from-the-environment", source: "env" });
  } finally {
    if (saved[0] === undefined) delete process.env.NEXTAUTH_SECRET;
    else process.env.NEXTAUTH_SECRET = saved[0];
    if (saved[1] !== undefined) process.env.AUTH_SECRET = saved[1];
  }
});
