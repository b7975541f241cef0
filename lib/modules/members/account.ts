// A member's own account: changing their console password (docs/security/identity.md#password-change). The
// current password is checked through the sign-in throttle (lib/modules/members/sign-in.ts: the account × address
// pair backs off, the account only slows down), so a stolen session cannot guess it any faster than
// the sign-in form would let it, and nobody else can lock the owner out through it.
import "server-only";
import { prisma } from "../../platform/db/prisma";
import { QuiesceError, badRequest, forbidden } from "../../platform/errors";
import { hashPassword, verifyPassword } from "../../platform/auth/password";
import { sleep } from "../../platform/wait";
import { authorize } from "../../platform/auth/authorize";
import type { Principal } from "../../platform/auth/principal";
import { appendAudit } from "../audit/audit";
import { endUserSessions } from "./members";
import { passwordGate, recordPasswordAttempt } from "./sign-in";

export interface PasswordChange {
  currentPassword: string;
  newPassword: string;
  /** The caller's source address (lib/platform/security/client-address.ts), for the throttle and the audit row. */
  address: string;
}

/**
 * Changes the signed-in user's password: bcrypt as at sign-in, the user's session version bumped (every
 * session of the user ends; the caller re-issues its own), audited `user.password_change` on the global
 * chain. A wrong current password is a 400 naming the field, counted like a failed sign-in, and audited
 * `user.password_change_failed`. Answers the new session version.
 */
export async function changeOwnPassword(p: Principal, input: PasswordChange): Promise<{ sessionVersion: number }> {
  authorize(p, "run.read");
  // A person's own password: only their console session may change it (not an API key, not the system).
  if (p.type !== "user") throw forbidden("only a signed-in person can change their password");
  const gate = await passwordGate(p.email, input.address);
  if (gate.blockedSeconds > 0)
    throw new QuiesceError("rate_limited", `too many wrong passwords: try again in ${gate.blockedSeconds} s`, {
      retryAfterSeconds: gate.blockedSeconds,
    });
  if (gate.delayMs > 0) await sleep(gate.delayMs);
  const user = await prisma().user.findUnique({ where: { id: p.userId } });
  if (!user || user.disabledAt) throw new QuiesceError("unauthenticated", "sign in again: your account is not active");
  const ok = await verifyPassword(input.currentPassword, user.passwordHash);
  const blocked = await recordPasswordAttempt(user.email, input.address, ok);
  if (!ok) {
    await prisma().$transaction((tx) =>
      appendAudit(tx, {
        teamId: null,
        actor: `user:${user.id}`,
        action: "user.password_change_failed",
        target: user.id,
        after: { address: input.address, ...(blocked ? { blockedForSeconds: blocked } : {}) },
      }),
    );
    throw badRequest("currentPassword: not your current password");
  }
  const passwordHash = await hashPassword(input.newPassword);
  return prisma().$transaction(async (tx) => {
    await tx.user.update({ where: { id: user.id }, data: { passwordHash } });
    await endUserSessions(tx, user.id);
    await appendAudit(tx, {
      teamId: null,
      actor: `user:${user.id}`,
      action: "user.password_change",
      target: user.id,
      after: { address: input.address },
    });
    const { sessionVersion } = await tx.user.findUniqueOrThrow({ where: { id: user.id }, select: { sessionVersion: true } });
    return { sessionVersion };
  });
}
