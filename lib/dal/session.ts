// The console's current principal (docs/architecture.md#security, OWASP ASVS 8.3.2). The session cookie only names the
// user; membership and role are read from the database on EVERY request, so a removed member or a
// changed role takes effect on the next click. cache() makes it one lookup per request, not per call.
import "server-only";
import { cache } from "react";
import { cookies } from "next/headers";
import { redirect } from "next/navigation";
import { getServerSession } from "next-auth";
import { authOptions } from "../auth/options";
import { prisma } from "../db/prisma";
import type { Role } from "../control/types";
import type { Principal } from "./principal";

/** Cookie naming the team the user is looking at (they may belong to several). Not a permission. */
export const TEAM_COOKIE = "quiesce_team";

export interface TeamRef { id: string; slug: string; name: string; role: Role }

export interface ConsoleSession {
  principal: Extract<Principal, { type: "user" }>;
  user: { id: string; email: string; name: string };
  team: TeamRef;
  teams: TeamRef[];
}

export type SessionState =
  | { kind: "signed_out" }
  | { kind: "no_team"; user: { id: string; email: string; name: string } }
  | { kind: "ok"; session: ConsoleSession };

export const sessionState = cache(async (): Promise<SessionState> => {
  const jwt = await getServerSession(authOptions);
  const userId = (jwt?.user as { id?: string } | undefined)?.id;
  if (!userId) return { kind: "signed_out" };
  const user = await prisma().user.findUnique({
    where: { id: userId },
    include: { memberships: { include: { team: true }, orderBy: { createdAt: "asc" } } },
  });
  // A deleted user's still-valid cookie signs in nobody.
  if (!user) return { kind: "signed_out" };
  const me = { id: user.id, email: user.email, name: user.name };
  const teams: TeamRef[] = user.memberships.map((m) => ({ id: m.team.id, slug: m.team.slug, name: m.team.name, role: m.role as Role }));
  if (teams.length === 0) return { kind: "no_team", user: me };
  const wanted = (await cookies()).get(TEAM_COOKIE)?.value;
  const team = teams.find((t) => t.slug === wanted) ?? teams[0]!;
  return {
    kind: "ok",
    session: {
      principal: { type: "user", userId: user.id, email: user.email, teamId: team.id, role: team.role },
      user: me, team, teams,
    },
  };
});

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
