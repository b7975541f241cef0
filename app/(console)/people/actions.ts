"use server";
// People: admins change a member's role, remove a member, disable or re-enable a membership in their
// team, or (as an admin of every team the user belongs to) a user everywhere. Each change is audited;
// removing and disabling end that user's console sessions on their next request.
import { serverAction } from "@/lib/actions/run-action";
import { MemberRoleInput, MemberRefInput, MemberDisabledInput } from "@/lib/schemas/console";
import { removeMember, setMemberRole, setMembershipDisabled, setUserDisabled } from "@/lib/modules/members";

export const setMemberRoleAction = serverAction(
  { name: "setMemberRole", input: MemberRoleInput, action: "member.manage", revalidate: ["/people"] },
  async ({ session, input }) => {
    const m = await setMemberRole(session.principal, { teamId: session.principal.teamId, userId: input.userId, role: input.role });
    return { userId: m.userId, role: m.role };
  },
);

export const removeMemberAction = serverAction(
  { name: "removeMember", input: MemberRefInput, action: "member.manage", revalidate: ["/people"] },
  async ({ session, input }) => {
    await removeMember(session.principal, { teamId: session.principal.teamId, userId: input.userId });
    return { userId: input.userId };
  },
);

/** The membership in the current team only: the user keeps their other teams. */
export const setMembershipDisabledAction = serverAction(
  { name: "setMembershipDisabled", input: MemberDisabledInput, action: "member.manage", revalidate: ["/people"] },
  async ({ session, input }) => {
    await setMembershipDisabled(session.principal, { teamId: session.principal.teamId, userId: input.userId, disabled: input.disabled });
    return { userId: input.userId, disabled: input.disabled };
  },
);

/** The user in every team: refused unless the caller is an admin of each of them. */
export const setUserDisabledAction = serverAction(
  { name: "setUserDisabled", input: MemberDisabledInput, action: "member.manage", revalidate: ["/people"] },
  async ({ session, input }) => {
    await setUserDisabled(session.principal, { userId: input.userId, disabled: input.disabled });
    return { userId: input.userId, disabled: input.disabled };
  },
);
