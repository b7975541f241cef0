// Whether a console session token may still be used (pure: the caller passes the user row and `now`).
// The token names the user, the session version it was issued at and when the user signed in; the
// user row is read from the database on every request, together with the role.

export interface SessionClaims {
  sub?: string;
  sv?: number;
  authAt?: number;
}
export interface SessionUserRow {
  sessionVersion: number;
  disabledAt: Date | null;
}

export type SessionVerdict = { ok: true } | { ok: false; why: "no_user" | "disabled" | "revoked" | "expired" | "malformed" };

export function judgeSession(claims: SessionClaims, user: SessionUserRow | null, now: Date, maxAgeSeconds: number): SessionVerdict {
  if (!user) return { ok: false, why: "no_user" };
  if (typeof claims.sv !== "number" || typeof claims.authAt !== "number") return { ok: false, why: "malformed" };
  if (user.disabledAt) return { ok: false, why: "disabled" };
  if (claims.sv !== user.sessionVersion) return { ok: false, why: "revoked" };
  if (now.getTime() - claims.authAt * 1000 > maxAgeSeconds * 1000) return { ok: false, why: "expired" };
  return { ok: true };
}
