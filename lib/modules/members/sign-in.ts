// Sign-in bookkeeping, before anyone is authenticated (so no principal): the password throttle and the
// audit rows for failed and successful sign-ins (global chain, team null), plus ending a user's sessions
// at sign-out. The throttle is built so that a stranger cannot turn it into a lock-out of the owner
// (docs/security/identity.md#throttling):
//  - per account × address: that pair is blocked with back-off, so guessing from one place stops while the
//    owner, from their own address, is untouched;
//  - per address: one place trying many accounts is blocked with back-off (it only hurts that address);
//  - per account, from every address together: a bounded slow-down before the password is checked (at
//    most QUIESCE_SIGNIN_SLOWDOWN_MAX_MS), never a block, so distributed guessing is slowed and the
//    owner's right password still signs in.
import "server-only";
import { prisma } from "../../platform/db/prisma";
import { setting } from "../../platform/config";
import { appendAudit } from "../audit/audit";
import { endUserSessions } from "./members";
import { clearThrottle, countThrottleFailure, recordThrottleFailure, throttleFailures, throttleWait } from "./throttle";

const normalEmail = (email: string) => email.trim().toLowerCase();
const accountKey = (email: string) => `account:${normalEmail(email)}`;
const pairKey = (email: string, address: string) => `account-address:${normalEmail(email)}|${address}`;
const addressKey = (address: string) => `address:${address}`;

export interface PasswordGate {
  /** Seconds this account × address pair (or this address) is still blocked: answer 429, check nothing. */
  blockedSeconds: number;
  /** Otherwise, how long to wait before checking the password (the per-account slow-down), in ms. */
  delayMs: number;
}

/** The slow-down after `failures` failed guesses on one account: 0 while free, then doubling from 250 ms, capped. */
export function slowDownMs(failures: number, free: number, maxMs: number): number {
  if (failures < free) return 0;
  return Math.min(maxMs, 250 * 2 ** Math.min(failures - free, 20));
}

/** What a password attempt for `email` from `address` must do first: wait out a block, or a delay. */
export async function passwordGate(email: string, address: string, now: Date = new Date()): Promise<PasswordGate> {
  const [blockedSeconds, [failures]] = await Promise.all([
    throttleWait([pairKey(email, address), addressKey(address)], now),
    throttleFailures([accountKey(email)], now),
  ]);
  return {
    blockedSeconds,
    delayMs:
      blockedSeconds > 0
        ? 0
        : slowDownMs(failures ?? 0, setting("QUIESCE_SIGNIN_FREE_FAILURES"), setting("QUIESCE_SIGNIN_SLOWDOWN_MAX_MS")),
  };
}

/** Counts a password attempt's outcome; returns the block it now imposes on the pair or the address (s, 0 if none). */
export async function recordPasswordAttempt(email: string, address: string, ok: boolean, now: Date = new Date()): Promise<number> {
  if (ok) {
    await clearThrottle([pairKey(email, address)]);
    return 0;
  }
  const wait = await recordThrottleFailure([pairKey(email, address), addressKey(address)], setting("QUIESCE_SIGNIN_FREE_FAILURES"), now);
  await countThrottleFailure([accountKey(email)], now);
  return wait;
}

/** Seconds this sign-in attempt must wait before it is even looked at (0: go ahead, perhaps after a delay). */
export async function signInWait(email: string, address: string): Promise<number> {
  return (await passwordGate(email, address)).blockedSeconds;
}

export async function recordSignIn(input: {
  email: string;
  address: string;
  ok: boolean;
  userId?: string | null;
  provider: string;
}): Promise<number> {
  const email = normalEmail(input.email);
  const wait = await recordPasswordAttempt(email, input.address, input.ok);
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

/** Seconds a source address's bad API keys are still refused for, as far as this process knows (its valid keys never wait). */
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
