// Changing one's own console password (lib/modules/members/account.ts), against the real database: the current
// password is required and guessed no faster than at sign-in (the same throttle); a change re-hashes
// with bcrypt, ends every session of the user (a copied session token stops), and is audited; bad input
// and refusals change nothing. The console page and the re-issued cookie: e2e/console/account.spec.ts.
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { prisma } from "../../lib/platform/db/prisma";
import { hashPassword, verifyPassword } from "../../lib/platform/auth/password";
import { authOptions } from "../../lib/modules/sessions/auth-options";
import { verifyCredentials } from "../../lib/modules/sessions/console/identity";
import { resolveConsoleSession, type SessionTokenClaims } from "../../lib/modules/sessions/session";
import { changeOwnPassword } from "../../lib/modules/members/account";
import { passwordGate } from "../../lib/modules/members/sign-in";
import { ChangePasswordInput } from "../../lib/schemas/console";
import type { Principal } from "../../lib/platform/auth/principal";
import { makeKey, makeTeam, makeUser } from "../support/fixtures";

const OLD = "correct horse battery";
let teamId = "";
let me: Extract<Principal, { type: "user" }>;

async function signIn(email: string, password: string): Promise<SessionTokenClaims | null> {
  const user = await verifyCredentials(email, password);
  if (!user) return null;
  const token = await authOptions().callbacks!.jwt!({
    token: {},
    user: user as never,
    account: { provider: "credentials", type: "credentials", providerAccountId: user.id },
  } as never);
  const session = await authOptions().callbacks!.session!({ session: { user: {}, expires: "" }, token, user: undefined } as never);
  return (session as unknown as { quiesce: SessionTokenClaims }).quiesce;
}

const row = (id: string) => prisma().user.findUniqueOrThrow({ where: { id } });

beforeAll(async () => {
  process.env.QUIESCE_SIGNIN_FREE_FAILURES = "3";
  ({ teamId } = await makeTeam("password change"));
  const u = await makeUser(teamId, "viewer");
  await prisma().user.update({ where: { id: u.userId }, data: { passwordHash: await hashPassword(OLD) } });
  me = { type: "user", userId: u.userId, email: u.email, teamId, role: "viewer" };
});
afterAll(async () => {
  await prisma().$disconnect();
});

describe("changeOwnPassword", () => {
  test("the right current password: new bcrypt hash, every session ends, audited; only the new password signs in", async () => {
    const before = await row(me.userId);
    const copied = await signIn(me.email, OLD);
    expect((await resolveConsoleSession(copied, undefined)).kind).toBe("ok");
    const { sessionVersion } = await changeOwnPassword(me, { currentPassword: OLD, newPassword: "a new passphrase", address: "10.8.0.1" });
    const after = await row(me.userId);
    expect(sessionVersion).toBe(before.sessionVersion + 1);
    expect(after.sessionVersion).toBe(sessionVersion);
    expect(after.passwordHash).toMatch(/^\$2[aby]\$/);
    expect(await verifyPassword("a new passphrase", after.passwordHash)).toBe(true);
    expect((await resolveConsoleSession(copied, undefined)).kind).toBe("signed_out");
    expect(await signIn(me.email, OLD)).toBeNull();
    expect(await signIn(me.email, "a new passphrase")).not.toBeNull();
    const audit = await prisma().auditEvent.findMany({ where: { action: "user.password_change", target: me.userId } });
    expect(audit).toHaveLength(1);
    expect(audit[0]!.actor).toBe(`user:${me.userId}`);
    // Back, for the tests below.
    await changeOwnPassword(me, { currentPassword: "a new passphrase", newPassword: OLD, address: "10.8.0.1" });
  });

  test("a wrong current password is a 400 naming the field, changes nothing, and is counted and audited", async () => {
    const before = await row(me.userId);
    await expect(
      changeOwnPassword(me, { currentPassword: "guess", newPassword: "whatever123", address: "10.8.0.2" }),
    ).rejects.toMatchObject({
      code: "bad_request",
      message: expect.stringContaining("currentPassword"),
    });
    const after = await row(me.userId);
    expect(after.passwordHash).toBe(before.passwordHash);
    expect(after.sessionVersion).toBe(before.sessionVersion);
    expect(await prisma().auditEvent.count({ where: { action: "user.password_change_failed", target: me.userId } })).toBe(1);
    expect((await prisma().authThrottle.findUnique({ where: { key: `account-address:${me.email}|10.8.0.2` } }))?.failures).toBe(1);
  });

  test("guessing the current password is throttled like sign-in: the pair is blocked (429), the owner elsewhere is not", async () => {
    // Three free failures (QUIESCE_SIGNIN_FREE_FAILURES), the fourth starts the pair's back-off.
    for (let i = 0; i < 4; i++)
      await expect(
        changeOwnPassword(me, { currentPassword: `guess${i}`, newPassword: "whatever123", address: "10.8.0.3" }),
      ).rejects.toMatchObject({
        code: "bad_request",
      });
    const before = await row(me.userId);
    // The right password from the guessing address: refused before it is looked at.
    await expect(changeOwnPassword(me, { currentPassword: OLD, newPassword: "whatever123", address: "10.8.0.3" })).rejects.toMatchObject({
      code: "rate_limited",
    });
    expect((await row(me.userId)).passwordHash).toBe(before.passwordHash);
    // From the owner's own address: at most slowed down, never blocked — and the change goes through.
    expect((await passwordGate(me.email, "10.8.0.4")).blockedSeconds).toBe(0);
    await changeOwnPassword(me, { currentPassword: OLD, newPassword: OLD, address: "10.8.0.4" });
  });

  test("only a person's console session may change it: an operator key of that very user is refused", async () => {
    const key = await makeKey(teamId, { kind: "operator", userId: me.userId });
    const asKey: Principal = { type: "key", keyId: key.keyId, teamId, kind: "operator", scopes: [], userId: me.userId, role: "viewer" };
    await expect(changeOwnPassword(asKey, { currentPassword: OLD, newPassword: "whatever123", address: "10.8.0.5" })).rejects.toMatchObject(
      {
        code: "forbidden",
      },
    );
  });

  test("the input rules: a new password of 8 characters up to 72 bytes; the current one required", () => {
    const ok = (v: unknown) => ChangePasswordInput.safeParse(v).success;
    expect(ok({ currentPassword: OLD, newPassword: "12345678" })).toBe(true);
    expect(ok({ currentPassword: OLD, newPassword: "1234567" })).toBe(false);
    expect(ok({ currentPassword: OLD, newPassword: "é".repeat(37) })).toBe(false);
    expect(ok({ currentPassword: "", newPassword: "12345678" })).toBe(false);
    expect(ok({ currentPassword: OLD, newPassword: "12345678", extra: 1 })).toBe(false);
  });
});
