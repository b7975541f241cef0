// Console sessions end (from the hardening review). A copied session token (its claims, as the
// signed cookie carries them) stops working on the next request after: sign-out, a password change,
// disabling the user, removing the membership; and after the absolute lifetime. A role change takes
// effect on the next request. Real database, the real next-auth callbacks.
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { prisma } from "../../lib/platform/db/prisma";
import { newId } from "../../lib/platform/ids";
import { hashPassword } from "../../lib/platform/auth/password";
import { authOptions } from "../../lib/modules/sessions/auth-options";
import { verifyCredentials } from "../../lib/modules/sessions/console/identity";
import { resolveConsoleSession, type SessionTokenClaims } from "../../lib/modules/sessions/session";
import { signOutUser } from "../../lib/modules/members/sign-in";
import { removeMember, setMemberRole, setUserDisabled } from "../../lib/modules/members/members";
import { ensureMembership, setUserPasswordHash } from "../../lib/modules/members/admin-directory";
import type { Principal } from "../../lib/platform/auth/principal";

const SYSTEM: Principal = { type: "system", name: "test" };
let teamId = "";
let adminId = "";
let userId = "";
const email = `sess.${Date.now()}@example.test`;
const PASSWORD = "correct horse battery";

/** Signs in through the real credentials check and next-auth callbacks; returns the token's claims. */
async function signIn(password = PASSWORD): Promise<SessionTokenClaims> {
  const user = await verifyCredentials(email, password);
  if (!user) throw new Error("sign-in refused");
  const token = await authOptions().callbacks!.jwt!({
    token: {},
    user: user as never,
    account: { provider: "credentials", type: "credentials", providerAccountId: user.id },
  } as never);
  const session = await authOptions().callbacks!.session!({ session: { user: {}, expires: "" }, token, user: undefined } as never);
  return (session as unknown as { quiesce: SessionTokenClaims }).quiesce;
}

async function state(claims: SessionTokenClaims, now?: Date) {
  return (await resolveConsoleSession(claims, undefined, now)).kind;
}

beforeAll(async () => {
  teamId = newId("team");
  await prisma().team.create({ data: { id: teamId, slug: `sess-${teamId.slice(5, 12).toLowerCase()}`, name: "sessions" } });
  adminId = newId("user");
  userId = newId("user");
  await prisma().user.create({ data: { id: adminId, email: `admin.${email}`, name: "admin" } });
  await prisma().user.create({ data: { id: userId, email, name: "member", passwordHash: await hashPassword(PASSWORD) } });
  await ensureMembership(SYSTEM, { teamId, userId: adminId, role: "admin" });
  await ensureMembership(SYSTEM, { teamId, userId, role: "operator" });
});
afterAll(async () => {
  await prisma().$disconnect();
});

const admin = (): Principal => ({ type: "user", userId: adminId, email: `admin.${email}`, teamId, role: "admin" });

describe("a copied session ends on the next request after", () => {
  test("sign-out (every session of the user, the copy included)", async () => {
    const copy = await signIn();
    const other = await signIn();
    expect(await state(copy)).toBe("ok");
    await signOutUser(userId);
    expect(await state(copy)).toBe("signed_out");
    expect(await state(other)).toBe("signed_out");
    expect(await state(await signIn())).toBe("ok");
  });

  test("a password change", async () => {
    const copy = await signIn();
    await setUserPasswordHash(SYSTEM, userId, await hashPassword(PASSWORD));
    expect(await state(copy)).toBe("signed_out");
  });

  test("disabling the user (who then cannot sign in either); re-enabling allows a new sign-in only", async () => {
    const copy = await signIn();
    await setUserDisabled(admin(), { userId, disabled: true });
    expect(await state(copy)).toBe("signed_out");
    await expect(signIn()).rejects.toThrow("sign-in refused");
    await setUserDisabled(admin(), { userId, disabled: false });
    expect(await state(copy)).toBe("signed_out");
    expect(await state(await signIn())).toBe("ok");
  });

  test("removing the membership (re-adding it does not revive the copy)", async () => {
    const copy = await signIn();
    await removeMember(admin(), { teamId, userId });
    expect(await state(copy)).toBe("signed_out");
    await ensureMembership(SYSTEM, { teamId, userId, role: "operator" });
    expect(await state(copy)).toBe("signed_out");
  });

  test("the absolute lifetime (12 h by default), however active the session", async () => {
    const copy = await signIn();
    const at = copy.authAt! * 1000;
    expect(await state(copy, new Date(at + 11 * 3600_000))).toBe("ok");
    expect(await state(copy, new Date(at + 12 * 3600_000 + 1000))).toBe("signed_out");
  });

  test("a token without a session version (issued before versions existed) signs in nobody", async () => {
    expect(await state({ sub: userId })).toBe("signed_out");
  });
});

test("a role change applies on the next request; every change is audited", async () => {
  const copy = await signIn();
  await setMemberRole(admin(), { teamId, userId, role: "viewer" });
  const s = await resolveConsoleSession(copy, undefined);
  expect(s.kind === "ok" && s.session.principal.role).toBe("viewer");
  const actions = (
    await prisma().auditEvent.findMany({ where: { OR: [{ teamId }, { teamId: null, target: userId }] }, orderBy: { id: "asc" } })
  ).map((e) => e.action);
  for (const a of ["user.signout", "user.password_set", "user.disable", "user.enable", "member.remove", "member.role"])
    expect(actions).toContain(a);
});

test("the team keeps its last admin; an admin cannot disable themself", async () => {
  await expect(setMemberRole(admin(), { teamId, userId: adminId, role: "viewer" })).rejects.toMatchObject({ code: "conflict" });
  await expect(removeMember(admin(), { teamId, userId: adminId })).rejects.toMatchObject({ code: "conflict" });
  await expect(setUserDisabled(admin(), { userId: adminId, disabled: true })).rejects.toMatchObject({ code: "conflict" });
});

test("people administration is admin-only and team-scoped", async () => {
  const operator: Principal = { type: "user", userId, email, teamId, role: "operator" };
  await expect(setMemberRole(operator, { teamId, userId: adminId, role: "viewer" })).rejects.toMatchObject({ code: "forbidden" });
  const stranger: Principal = { type: "user", userId: adminId, email: "x", teamId: "team_other", role: "admin" };
  await expect(removeMember(stranger, { teamId, userId })).rejects.toMatchObject({ code: "not_found" });
});
