"use server";
// People: admins change a member's role, remove a member, disable or re-enable a user. Each change is
// audited; removing and disabling end that user's console sessions on their next request.
import { runAction } from "@/lib/actions/run-action";
import { MemberRoleInput, MemberRefInput, MemberDisabledInput } from "@/lib/schemas/console";
import { removeMember, setMemberRole, setUserDisabled } from "@/lib/dal/members";

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

export async function setUserDisabledAction(raw: unknown) {
  return runAction(
    { name: "setUserDisabled", input: MemberDisabledInput, action: "member.manage", revalidate: () => ["/people"] },
    raw,
    async ({ session, input }) => {
      await setUserDisabled(session.principal, { teamId: session.principal.teamId, userId: input.userId, disabled: input.disabled });
      return { userId: input.userId, disabled: input.disabled };
    },
  );
}
