// The one place that waits: sleeping that a caller can cut short, the one backoff schedule, a
// re-armable wake-up signal, bounded concurrency over a list, and polling until a condition holds
// (tests, evals, drills). Built on
// node:timers/promises so an aborted wait never leaves a timer behind.
import { setTimeout as delay } from "node:timers/promises";

export class AbortedError extends Error {
  constructor(message = "aborted") {
    super(message);
    this.name = "AbortedError";
  }
}

/**
 * Resolves after `ms`, or early (without error) when `wake` fires; rejects with AbortedError when
 * `signal` aborts. To stop quietly on a signal, pass it as `wake`.
 */
export async function sleep(ms: number, signal?: AbortSignal, wake?: AbortSignal): Promise<void> {
  if (signal?.aborted) throw new AbortedError();
  if (wake?.aborted || ms <= 0) return;
  // One controller per wait, unhooked afterwards, so a long-lived signal collects no listeners.
  const cut = new AbortController();
  const stop = () => cut.abort();
  signal?.addEventListener("abort", stop, { once: true });
  wake?.addEventListener("abort", stop, { once: true });
  try {
    await delay(ms, undefined, { signal: cut.signal });
  } catch (err) {
    if (signal?.aborted) throw new AbortedError();
    if (wake?.aborted) return;
    throw err;
  } finally {
    signal?.removeEventListener("abort", stop);
    wake?.removeEventListener("abort", stop);
  }
}

export interface BackoffSchedule {
  /** First delay. */
  baseMs?: number;
  /** Delays never pass this. */
  capMs?: number;
}

/**
 * The one backoff schedule: `baseMs` doubling per attempt (0-based) up to `capMs`. Used for re-asking
 * a held gate, reconnecting a LISTEN connection or an event stream, and retrying an unreachable
 * control plane; callers differ only in base and cap.
 */
export function backoffDelay(attempt: number, { baseMs = 200, capMs = 2000 }: BackoffSchedule = {}): number {
  return Math.min(capMs, baseMs * 2 ** Math.min(Math.max(attempt, 0), 30));
}

/** `fn` over `items` with at most `limit` calls in flight, in order of start; resolves when all are done. */
export async function forEachBounded<T>(items: readonly T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) await fn(items[next++]!);
    }),
  );
}

/** A one-shot "something changed" signal that can be re-armed; wakes hold loops on control events. */
export class Doorbell {
  private ctrl = new AbortController();
  get signal(): AbortSignal {
    return this.ctrl.signal;
  }
  ring(): void {
    const old = this.ctrl;
    this.ctrl = new AbortController();
    old.abort();
  }
}

// Polls until `fn` yields a truthy value, for tests, evals and drills that wait on another process
// (a receipt being issued, a server answering). Errors thrown by `fn` count as "not yet"; the last one
// is named in the timeout message so a stuck wait says why.
export async function waitFor<T>(
  what: string,
  fn: () => Promise<T | null | undefined | false>,
  timeoutMs = 60_000,
  everyMs = 150,
): Promise<T> {
  const until = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > until) {
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? ` (last error: ${(last as Error).message})` : ""}`);
    }
    await delay(everyMs);
  }
}

/** waitFor for a value that must satisfy a predicate; the timeout names the last value seen. */
export async function waitForValue<T>(fn: () => Promise<T>, ok: (v: T) => boolean, timeoutMs = 30_000, everyMs = 50): Promise<T> {
  let last: T | undefined;
  const hit = await waitFor(
    "condition",
    async () => {
      last = await fn();
      return ok(last) ? { v: last } : null;
    },
    timeoutMs,
    everyMs,
  ).catch((err: Error) => {
    throw new Error(`${err.message}; last value ${JSON.stringify(last, (_k, x) => (typeof x === "bigint" ? String(x) : x))}`);
  });
  return hit.v;
}
