// `quiesce members …`: the admin CLI for people — list a team's members, change a role, remove a member,
// disable or re-enable a membership in one team, or a user everywhere — straight to the database as a
// system principal. Every change is audited; removing and disabling end the user's console sessions on
// their next request, and no team is left without an active admin.
import type { Command } from "./types";
import { parseFlags, requireFlag, UsageError } from "../../lib/cli/args";
import { ROLES, type Role } from "../../lib/control/types";
import { findTeamBySlug, findUserByEmail } from "../../lib/modules/members";
import { listMembers, removeMember, setMemberRole, setMembershipDisabled, setUserDisabled } from "../../lib/modules/members";
import type { Principal } from "../../lib/platform/auth/principal";
import { withDatabase } from "../../lib/start/database";

const SYSTEM: Principal = { type: "system", name: "cli" };
const USAGE = [
  "npm run quiesce -- members list --team <slug> [--json]",
  "       npm run quiesce -- members set-role --team <slug> --user <email> --role viewer|operator|manager|admin",
  "       npm run quiesce -- members remove --team <slug> --user <email>",
  "       npm run quiesce -- members disable|enable --team <slug> --user <email>    (the membership in that team only)",
  "       npm run quiesce -- members disable-user|enable-user --user <email>       (the user in every team)",
].join("\n");
const ACTIONS = ["list", "set-role", "remove", "disable", "enable", "disable-user", "enable-user"];

export const membersCommand: Command = {
  summary: "list members, change roles, remove members, disable or enable memberships or users (audited)",
  usage: USAGE,
  async run(argv) {
    const [sub, ...rest] = argv;
    if (!sub || !ACTIONS.includes(sub)) {
      throw new UsageError(sub ? `unknown members action "${sub}"` : `an action is required: ${ACTIONS.join(", ")}`);
    }
    const userWide = sub === "disable-user" || sub === "enable-user";
    const { values, positionals } = parseFlags(rest, {
      team: { type: "string" },
      user: { type: "string" },
      role: { type: "string" },
      json: { type: "boolean" },
    });
    if (positionals.length) throw new UsageError(`unexpected argument: ${positionals[0]}`);
    if (userWide && values.team !== undefined)
      throw new UsageError(`--team: ${sub} acts on every team of the user; use disable|enable --team for one`);
    const slug = userWide ? undefined : requireFlag(values.team, "team");
    const email = sub === "list" ? undefined : requireFlag(values.user, "user");
    const role = sub === "set-role" ? requireFlag(values.role, "role") : undefined;
    if (role !== undefined && !(ROLES as readonly string[]).includes(role))
      throw new UsageError(`--role: must be one of ${ROLES.join(", ")}, got "${role}"`);
    return withDatabase(async () => {
      if (userWide) {
        const user = await findUserByEmail(SYSTEM, email!);
        if (!user) throw new UsageError(`--user: no user with email "${email}"`);
        await setUserDisabled(SYSTEM, { userId: user.id, disabled: sub === "disable-user" });
        console.log(`${user.email}: ${sub === "disable-user" ? "disabled" : "enabled"} in every team`);
        return 0;
      }
      const team = await findTeamBySlug(SYSTEM, slug!);
      if (!team) throw new UsageError(`--team: no team with slug "${slug}"`);
      if (sub === "list") {
        const members = await listMembers(SYSTEM, team.id);
        if (values.json) console.log(JSON.stringify(members));
        else
          for (const m of members)
            console.log(`${m.email}\t${m.role}${m.userDisabled ? "\tdisabled everywhere" : m.disabled ? "\tdisabled in this team" : ""}`);
        return 0;
      }
      const user = await findUserByEmail(SYSTEM, email!);
      if (!user) throw new UsageError(`--user: no user with email "${email}"`);
      if (sub === "set-role") await setMemberRole(SYSTEM, { teamId: team.id, userId: user.id, role: role as Role });
      else if (sub === "remove") await removeMember(SYSTEM, { teamId: team.id, userId: user.id });
      else await setMembershipDisabled(SYSTEM, { teamId: team.id, userId: user.id, disabled: sub === "disable" });
      console.log(
        `${user.email}: ${sub === "set-role" ? `role ${role}` : sub === "remove" ? `removed from ${slug}` : `${sub}d in ${slug}`}`,
      );
      return 0;
    });
  },
};
