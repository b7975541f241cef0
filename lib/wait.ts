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
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** waitFor for a value that must satisfy a predicate; the timeout names the last value seen. */
export async function waitForValue<T>(fn: () => Promise<T>, ok: (v: T) => boolean, timeoutMs = 30_000, everyMs = 50): Promise<T> {
  let last: T | undefined;
  const hit = await waitFor(
    "condition",
    async () => { last = await fn(); return ok(last) ? { v: last } : null; },
    timeoutMs,
    everyMs,
  ).catch((err: Error) => { throw new Error(`${err.message}; last value ${JSON.stringify(last)}`); });
  return hit.v;
}
