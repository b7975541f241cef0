// The console's current principal (docs/architecture.md#security, OWASP ASVS 8.3.2). The session cookie only names the
// user; membership and role are read from the database on EVERY request, so a removed member or a
// changed role takes effect on the next click. cache() makes it one lookup per request, not per call.
import "server-only";
import { cache } from "react";
import { cookies } from "next/headers";
import { redirect } from "next/navigation";
import { getServerSession } from "next-auth";
import { authOptions } from "./auth-options";
import { prisma } from "../../platform/db/prisma";
import type { Role } from "../../control/types";
import type { Principal } from "../../platform/auth/principal";
import { judgeSession, type SessionClaims } from "../../platform/security/session-policy";
import { setting } from "../../platform/config";

/** Cookie naming the team the user is looking at (they may belong to several). Not a permission. */
export const TEAM_COOKIE = "quiesce_team";

export interface TeamRef {
  id: string;
  slug: string;
  name: string;
  role: Role;
}

export interface ConsoleSession {
  principal: Extract<Principal, { type: "user" }>;
  user: { id: string; email: string; name: string };
  team: TeamRef;
  teams: TeamRef[];
}

export type SessionState =
  { kind: "signed_out" } | { kind: "no_team"; user: { id: string; email: string; name: string } } | { kind: "ok"; session: ConsoleSession };

/** The claims a console session token carries beyond the user id (see lib/modules/sessions/auth-options.ts). */
export type SessionTokenClaims = SessionClaims;

/**
 * Resolves a session token's claims into the member it signs in, reading the user, its session
 * version, whether it is disabled and its memberships from the database (one query). Exported for
 * the session test; pages and routes use sessionState().
 */
export async function resolveConsoleSession(
  claims: SessionClaims | null,
  wantedTeamSlug: string | undefined,
  now: Date = new Date(),
): Promise<SessionState> {
  const userId = claims?.sub;
  if (!claims || !userId) return { kind: "signed_out" };
  const user = await prisma().user.findUnique({
    where: { id: userId },
    include: { memberships: { include: { team: true }, orderBy: { createdAt: "asc" } } },
  });
  // A deleted or disabled user, an ended session (sign-out, password change, removal) or one past its
  // absolute lifetime signs in nobody.
  if (!judgeSession(claims, user, now, setting("QUIESCE_SESSION_MAX_AGE")).ok || !user) return { kind: "signed_out" };
  const me = { id: user.id, email: user.email, name: user.name };
  const teams: TeamRef[] = user.memberships.map((m) => ({ id: m.team.id, slug: m.team.slug, name: m.team.name, role: m.role as Role }));
  if (teams.length === 0) return { kind: "no_team", user: me };
  const team = teams.find((t) => t.slug === wantedTeamSlug) ?? teams[0]!;
  return {
    kind: "ok",
    session: {
      principal: { type: "user", userId: user.id, email: user.email, teamId: team.id, role: team.role },
      user: me,
      team,
      teams,
    },
  };
}

export const sessionState = cache(async (): Promise<SessionState> => {
  const jwt = await getServerSession(authOptions());
  const claims = (jwt as { quiesce?: SessionClaims } | null)?.quiesce ?? null;
  return resolveConsoleSession(claims, (await cookies()).get(TEAM_COOKIE)?.value);
});

/**
 * For long-lived responses (the console's event stream): captures this request's session token and
 * team choice, and returns a check that re-reads them from the database later — outside the request —
 * answering false once the session ended, the member left the team or lost read access.
 */
export async function sessionRecheck(): Promise<() => Promise<boolean>> {
  const jwt = await getServerSession(authOptions());
  const claims = (jwt as { quiesce?: SessionClaims } | null)?.quiesce ?? null;
  const slug = (await cookies()).get(TEAM_COOKIE)?.value;
  const first = await resolveConsoleSession(claims, slug);
  const teamId = first.kind === "ok" ? first.session.team.id : null;
  return async () => {
    const now = await resolveConsoleSession(claims, slug);
    return now.kind === "ok" && now.session.team.id === teamId;
  };
}

/** For pages: the signed-in member, or a redirect to sign-in (or to the no-team notice). */
export async function requireSession(): Promise<ConsoleSession> {
  const s = await sessionState();
  if (s.kind === "signed_out") redirect("/signin");
  if (s.kind === "no_team") redirect("/signin?error=NoTeam");
  return s.session;
}

/** For route handlers and server actions: null instead of a redirect. */
export async function currentSession(): Promise<ConsoleSession | null> {
  const s = await sessionState();
  return s.kind === "ok" ? s.session : null;
}
