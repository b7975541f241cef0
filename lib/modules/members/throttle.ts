// Sign-in and API-key throttling, kept in PostgreSQL so every replica sees the same counts. These run
// BEFORE anyone is authenticated, so they take no principal: they only count failures per subject
// ("account-address:<email>|<ip>", "address:<ip>", "account:<email>", "key-address:<ip>") and answer
// how long a subject must wait.
// Back-off is exponential: after `free` failures the subject waits 2, 4, 8 … seconds (capped), and
// a quiet hour forgets the count.
import "server-only";
import { prisma } from "../../platform/db/prisma";
import { setting } from "../../platform/config";

/** Seconds the most-blocked of `keys` must still wait, or 0. */
export async function throttleWait(keys: string[], now: Date = new Date()): Promise<number> {
  if (keys.length === 0) return 0;
  const rows = await prisma().$queryRawUnsafe<{ until: Date | null }[]>(
    `SELECT max(blocked_until) AS until FROM auth_throttles WHERE key = ANY($1::text[]) AND blocked_until > $2`,
    keys,
    now,
  );
  const until = rows[0]?.until;
  return until ? Math.max(1, Math.ceil((until.getTime() - now.getTime()) / 1000)) : 0;
}

/** Counts one failure for each key; returns the longest wait it now imposes (0 while still free). */
export async function recordThrottleFailure(keys: string[], free: number, now: Date = new Date()): Promise<number> {
  const max = setting("QUIESCE_THROTTLE_MAX_SECONDS");
  let wait = 0;
  for (const key of keys) {
    const rows = await prisma().$queryRawUnsafe<{ blocked_until: Date | null }[]>(
      `INSERT INTO auth_throttles AS t (key, failures, last_failure_at, blocked_until) VALUES ($1, 1, $2, NULL)
       ON CONFLICT (key) DO UPDATE SET
         failures = CASE WHEN t.last_failure_at < $2 - interval '1 hour' THEN 1 ELSE t.failures + 1 END,
         last_failure_at = $2
       RETURNING failures, blocked_until`,
      key,
      now,
    );
    const failures = (rows[0] as unknown as { failures: number } | undefined)?.failures ?? 1;
    if (failures > free) {
      const seconds = Math.min(max, 2 ** Math.min(failures - free, 30));
      const until = new Date(now.getTime() + seconds * 1000);
      await prisma().$executeRawUnsafe(`UPDATE auth_throttles SET blocked_until = greatest(blocked_until, $2) WHERE key = $1`, key, until);
      wait = Math.max(wait, seconds);
    }
  }
  return wait;
}

/** Counts one failure for each key without ever blocking it (the per-account slow-down); returns the counts. */
export async function countThrottleFailure(keys: string[], now: Date = new Date()): Promise<number[]> {
  const counts: number[] = [];
  for (const key of keys) {
    const rows = await prisma().$queryRawUnsafe<{ failures: number }[]>(
      `INSERT INTO auth_throttles AS t (key, failures, last_failure_at, blocked_until) VALUES ($1, 1, $2, NULL)
       ON CONFLICT (key) DO UPDATE SET
         failures = CASE WHEN t.last_failure_at < $2 - interval '1 hour' THEN 1 ELSE t.failures + 1 END,
         last_failure_at = $2
       RETURNING failures`,
      key,
      now,
    );
    counts.push(rows[0]?.failures ?? 1);
  }
  return counts;
}

/** Failures counted for each key within the last quiet hour (0 for none), in the order asked. */
export async function throttleFailures(keys: string[], now: Date = new Date()): Promise<number[]> {
  if (keys.length === 0) return [];
  const rows = await prisma().$queryRawUnsafe<{ key: string; failures: number }[]>(
    `SELECT key, failures FROM auth_throttles WHERE key = ANY($1::text[]) AND last_failure_at >= $2::timestamptz - interval '1 hour'`,
    keys,
    now,
  );
  return keys.map((k) => rows.find((r) => r.key === k)?.failures ?? 0);
}

/** A successful sign-in clears its account and address pair's count (the address and the account keep theirs). */
export async function clearThrottle(keys: string[]): Promise<void> {
  if (keys.length === 0) return;
  await prisma().$executeRawUnsafe(`DELETE FROM auth_throttles WHERE key = ANY($1::text[])`, keys);
}
