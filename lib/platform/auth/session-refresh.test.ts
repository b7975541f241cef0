// The session cookie's idle timeout slides while the console is used, and never revives a dead token.
import { expect, test } from "vitest";
import { decode, encode } from "next-auth/jwt";
import { refreshedSessionToken } from "./session-refresh";

const secret = "s".repeat(43);

test("a used cookie older than a minute is re-issued with the same claims and a new expiry; fresh and expired ones are not", async () => {
  const now = Math.floor(Date.now() / 1000);
  const token = await encode({ token: { sub: "user_1", sv: 3, authAt: now - 7200 }, secret, maxAge: 3600 });
  expect(await refreshedSessionToken(token, secret, 3600, now)).toBeNull();
  const later = now + 600;
  const renewed = await refreshedSessionToken(token, secret, 3600, later);
  expect(renewed).not.toBeNull();
  const claims = await decode({ token: renewed!, secret });
  expect(claims).toMatchObject({ sub: "user_1", sv: 3, authAt: now - 7200 });
  // A new token (new id), expiring a full idle period from when it was issued.
  const original = await decode({ token, secret });
  expect(claims!.jti).not.toBe(original!.jti);
  expect(claims!.exp as number).toBeGreaterThanOrEqual(original!.exp as number);
  expect(await refreshedSessionToken(token, secret, 3600, now + 4000)).toBeNull();
  expect(await refreshedSessionToken("garbage", secret, 3600, now)).toBeNull();
  expect(await refreshedSessionToken(token, "x".repeat(43), 3600, later)).toBeNull();
});
