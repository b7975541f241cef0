// The idle timeout of a console session: the cookie lives for QUIESCE_SESSION_IDLE_SECONDS and is
// re-issued (same claims, new expiry) whenever a page is requested with a cookie older than a minute,
// so only an unused session expires. The absolute lifetime is separate: it is counted from the
// sign-in time inside the token and checked on every request (lib/modules/sessions/session.ts).
import { decode, encode } from "next-auth/jwt";

/** A fresh cookie value for `value`, or null when it needs none (still fresh, or not a valid token). */
export async function refreshedSessionToken(
  value: string,
  secret: string,
  idleSeconds: number,
  nowSeconds = Math.floor(Date.now() / 1000),
): Promise<string | null> {
  const payload = await decode({ token: value, secret }).catch(() => null);
  if (!payload || typeof payload.exp !== "number" || payload.exp <= nowSeconds) return null;
  if (payload.exp - nowSeconds > idleSeconds - 60) return null;
  const { iat: _iat, exp: _exp, jti: _jti, ...claims } = payload as Record<string, unknown>;
  return encode({ token: claims, secret, maxAge: idleSeconds });
}

/**
 * The same session with a new session version: after a password change the version moves on (every
 * other session of the user ends) and the session that made the change gets this cookie, so it stays
 * signed in. The sign-in time is kept, so the absolute lifetime is not extended. Null for a token that
 * does not decode.
 */
export async function reissuedSessionToken(
  value: string,
  secret: string,
  idleSeconds: number,
  sessionVersion: number,
): Promise<string | null> {
  const payload = await decode({ token: value, secret }).catch(() => null);
  if (!payload) return null;
  const { iat: _iat, exp: _exp, jti: _jti, ...claims } = payload as Record<string, unknown>;
  return encode({ token: { ...claims, sv: sessionVersion }, secret, maxAge: idleSeconds });
}
