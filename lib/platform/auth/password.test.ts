import { expect, test } from "vitest";
import { hashPassword, verifyPassword } from "./password";

test("a hashed password verifies, a different one does not, and the hash is not the password", async () => {
  const hash = await hashPassword("correct horse battery");
  expect(hash).not.toContain("correct horse");
  expect(hash).toMatch(/^\$2[aby]\$/);
  expect(await verifyPassword("correct horse battery", hash)).toBe(true);
  expect(await verifyPassword("correct horse batterY", hash)).toBe(false);
  expect(await verifyPassword("", hash)).toBe(false);
});

test("two hashes of one password differ (salted) and both verify", async () => {
  const [a, b] = await Promise.all([hashPassword("pw-123456"), hashPassword("pw-123456")]);
  expect(a).not.toBe(b);
  expect(await verifyPassword("pw-123456", a)).toBe(true);
  expect(await verifyPassword("pw-123456", b)).toBe(true);
});

test("missing or malformed hashes deny instead of throwing; bad inputs to hash are refused", async () => {
  expect(await verifyPassword("x", null)).toBe(false);
  expect(await verifyPassword("x", undefined)).toBe(false);
  expect(await verifyPassword("x", "not-a-bcrypt-hash")).toBe(false);
  await expect(hashPassword("")).rejects.toThrow(/non-empty/);
  await expect(hashPassword("é".repeat(40))).rejects.toThrow(/72 bytes/);
});
