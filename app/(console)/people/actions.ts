"use server";
// People: admins change a member's role, remove a member, disable or re-enable a membership in their
// team, or (as an admin of every team the user belongs to) a user everywhere. Each change is audited;
// removing and disabling end that user's console sessions on their next request.
import { runAction } from "@/lib/actions/run-action";
import { MemberRoleInput, MemberRefInput, MemberDisabledInput } from "@/lib/schemas/console";
import { removeMember, setMemberRole, setMembershipDisabled, setUserDisabled } from "@/lib/modules/members";

export async function setMemberRoleAction(raw: unknown) {
  return runAction(
    { name: "setMemberRole", input: MemberRoleInput, action: "member.manage", revalidate: () => ["/people"] },
    raw,
    async ({ session, input }) => {
      const m = await setMemberRole(session.principal, { teamId: session.principal.teamId, userId: input.userId, role: input.role });
      return { userId: m.userId, role: m.role };
    },
  );
}

export async function removeMemberAction(raw: unknown) {
  return runAction(
    { name: "removeMember", input: MemberRefInput, action: "member.manage", revalidate: () => ["/people"] },
    raw,
    async ({ session, input }) => {
      await removeMember(session.principal, { teamId: session.principal.teamId, userId: input.userId });
      return { userId: input.userId };
    },
  );
}

/** The membership in the current team only: the user keeps their other teams. */
export async function setMembershipDisabledAction(raw: unknown) {
  return runAction(
    { name: "setMembershipDisabled", input: MemberDisabledInput, action: "member.manage", revalidate: () => ["/people"] },
    raw,
    async ({ session, input }) => {
      await setMembershipDisabled(session.principal, { teamId: session.principal.teamId, userId: input.userId, disabled: input.disabled });
      return { userId: input.userId, disabled: input.disabled };
    },
  );
}

/** The user in every team: refused unless the caller is an admin of each of them. */
export async function setUserDisabledAction(raw: unknown) {
  return runAction(
    { name: "setUserDisabled", input: MemberDisabledInput, action: "member.manage", revalidate: () => ["/people"] },
    raw,
    async ({ session, input }) => {
      await setUserDisabled(session.principal, { userId: input.userId, disabled: input.disabled });
      return { userId: input.userId, disabled: input.disabled };
    },
  );
}
