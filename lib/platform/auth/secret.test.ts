import { afterEach, describe, expect, it } from "vitest";
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { authSecret } from "./secret";

const saved = process.env.NEXTAUTH_SECRET;
afterEach(() => {
  if (saved === undefined) delete process.env.NEXTAUTH_SECRET;
  else process.env.NEXTAUTH_SECRET = saved;
});

describe("session cookie secret", () => {
  it("is generated once, kept private on disk, and reused by the next start", () => {
    delete process.env.NEXTAUTH_SECRET;
    const dir = mkdtempSync(path.join(os.tmpdir(), "quiesce-secret-"));
    try {
      const first = authSecret(dir);
      expect(first.length).toBeGreaterThanOrEqual(32);
      expect(authSecret(dir)).toBe(first);
      const file = path.join(dir, "auth-secret");
      expect(readFileSync(file, "utf8").trim()).toBe(first);
      expect(statSync(file).mode & 0o077).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("prefers NEXTAUTH_SECRET and writes nothing then", () => {
    process.env.NEXTAUTH_SECRET = "from-the-environment-0123456789abcdef";
    const dir = mkdtempSync(path.join(os.tmpdir(), "quiesce-secret-"));
    try {
      expect(authSecret(dir)).toBe("from-the-environment-0123456789abcdef");
      expect(() => statSync(path.join(dir, "auth-secret"))).toThrow();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
