// Sign-in bookkeeping, before anyone is authenticated (so no principal): the throttle per account and
// per source address, and the audit rows for failed and successful sign-ins (global chain, team null),
// plus ending a user's sessions at sign-out.
import "server-only";
import { prisma } from "../db/prisma";
import { setting } from "../config";
import { appendAudit } from "./audit";
import { endUserSessions } from "./members";
import { clearThrottle, recordThrottleFailure, throttleWait } from "./throttle";

const accountKey = (email: string) => `account:${email.trim().toLowerCase()}`;
const addressKey = (address: string) => `address:${address}`;

/** Seconds this sign-in attempt must wait before it is even looked at (0: go ahead). */
export async function signInWait(email: string, address: string): Promise<number> {
  return throttleWait([accountKey(email), addressKey(address)]);
}

export async function recordSignIn(input: {
  email: string;
  address: string;
  ok: boolean;
  userId?: string | null;
  provider: string;
}): Promise<number> {
  const email = input.email.trim().toLowerCase();
  let wait = 0;
  if (input.ok) await clearThrottle([accountKey(email)]);
  else wait = await recordThrottleFailure([accountKey(email), addressKey(input.address)], setting("QUIESCE_SIGNIN_FREE_FAILURES"));
  await prisma().$transaction(async (tx) => {
    await appendAudit(tx, {
      teamId: null,
      actor: input.userId ? `user:${input.userId}` : `anonymous@${input.address}`,
      action: input.ok ? "user.signin" : "user.signin_failed",
      target: input.userId ?? email.slice(0, 320),
      after: { provider: input.provider, address: input.address, ...(wait ? { blockedForSeconds: wait } : {}) },
    });
  });
  return wait;
}

/** Sign-out ends every session of the user (a copied cookie included), audited. */
export async function signOutUser(userId: string): Promise<void> {
  await prisma().$transaction(async (tx) => {
    await endUserSessions(tx, userId);
    await appendAudit(tx, { teamId: null, actor: `user:${userId}`, action: "user.signout", target: userId });
  });
}

const keyAddressKey = (address: string) => `key-address:${address}`;
/** Addresses this process has seen blocked, with the time the block ends (refreshed on every failure). */
const knownBlocks = new Map<string, number>();

/** Seconds a source address must wait before its API key is looked at, as far as this process knows. */
export function badKeyWait(address: string, now: number = Date.now()): number {
  const until = knownBlocks.get(address);
  if (!until) return 0;
  if (until <= now) {
    knownBlocks.delete(address);
    return 0;
  }
  return Math.ceil((until - now) / 1000);
}

/** Counts a bad API key from `address` (in PostgreSQL, shared by replicas); returns the wait it imposes. */
export async function recordBadKey(address: string, now: Date = new Date()): Promise<number> {
  const wait = await recordThrottleFailure([keyAddressKey(address)], setting("QUIESCE_BAD_KEY_FREE_FAILURES"), now);
  const stored = await throttleWait([keyAddressKey(address)], now);
  const longest = Math.max(wait, stored);
  if (longest > 0) {
    // Each bad key is only counted (auditing every guess would let anyone flood the chain); each new
    // block of an address is audited.
    if (wait > 0) {
      await prisma()
        .$transaction((tx) =>
          appendAudit(tx, {
            teamId: null,
            actor: `anonymous@${address}`,
            action: "apikey.address_blocked",
            target: address,
            after: { blockedForSeconds: wait },
          }),
        )
        .catch(() => undefined);
    }
    knownBlocks.set(address, now.getTime() + longest * 1000);
  }
  return longest;
}
