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
