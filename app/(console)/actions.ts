"use server";
// Console-wide actions. Like every action, through runAction (lib/actions/run-action.ts).
import { cookies } from "next/headers";
import { serverAction } from "@/lib/actions/run-action";
import { SwitchTeamInput } from "@/lib/schemas/console";
import { TEAM_COOKIE } from "@/lib/modules/sessions";
import { notFound } from "@/lib/platform/errors";
import { setting } from "@/lib/platform/config";

/** Chooses which of the member's teams the console shows. The cookie is a preference, not a grant:
 *  every request re-reads the membership, and a slug the user does not belong to falls back. */
export const switchTeamAction = serverAction(
  { name: "switchTeam", input: SwitchTeamInput, action: "run.read", revalidate: ["/"] },
  async ({ session, input }) => {
    if (!session.teams.some((t) => t.slug === input.slug)) throw notFound("team");
    (await cookies()).set(TEAM_COOKIE, input.slug, {
      httpOnly: true,
      sameSite: "lax",
      path: "/",
      secure: setting("NEXTAUTH_URL")?.startsWith("https:") ?? false,
    });
    return { slug: input.slug };
  },
);
