// The security headers (from the hardening review); the browser check is e2e/security.
import { expect, test } from "vitest";
import { contentSecurityPolicy, newNonce, securityHeaders } from "./headers";

test("pages: a nonce CSP with strict-dynamic and frame-ancestors 'none', nosniff, referrer and permissions policies", () => {
  const nonce = newNonce();
  const h = securityHeaders({ nonce, https: false });
  expect(h["content-security-policy"]).toContain(`script-src 'self' 'nonce-${nonce}' 'strict-dynamic'`);
  expect(h["content-security-policy"]).toContain("frame-ancestors 'none'");
  expect(h["content-security-policy"]).toContain("object-src 'none'");
  expect(h["content-security-policy"]).not.toContain("unsafe-eval");
  expect(h["x-content-type-options"]).toBe("nosniff");
  expect(h["referrer-policy"]).toBe("strict-origin-when-cross-origin");
  expect(h["permissions-policy"]).toContain("camera=()");
  expect(h["strict-transport-security"]).toBeUndefined();
  expect(securityHeaders({ nonce, https: true })["strict-transport-security"]).toMatch(/^max-age=\d+/);
  expect(contentSecurityPolicy(nonce, true)).toContain("'unsafe-eval'");
});

test("nonces are fresh and unguessable (16 random bytes)", () => {
  const seen = new Set(Array.from({ length: 1000 }, () => newNonce()));
  expect(seen.size).toBe(1000);
  expect(Buffer.from(newNonce(), "base64")).toHaveLength(16);
});
