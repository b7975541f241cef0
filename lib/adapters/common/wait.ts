// Waiting that a caller can cut short: holds (pause) re-ask the gate with capped exponential backoff,
// and wake early when the control plane announces a change or the caller cancels.

export class AbortedError extends Error {
  constructor(message = "aborted") {
    super(message);
    this.name = "AbortedError";
  }
}

/** Resolves after `ms`, or early (without error) when `wake` fires; rejects with AbortedError on `signal`. */
export function sleep(ms: number, signal?: AbortSignal, wake?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new AbortedError());
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
      wake?.removeEventListener("abort", done);
      resolve();
    };
    const onAbort = () => {
      clearTimeout(timer);
      wake?.removeEventListener("abort", done);
      reject(new AbortedError());
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
    if (wake?.aborted) return done();
    wake?.addEventListener("abort", done, { once: true });
  });
}

/** Backoff delays for re-asking a held gate: 200 ms doubling to a cap. */
export function backoffDelay(attempt: number, capMs = 2000, baseMs = 200): number {
  return Math.min(capMs, baseMs * 2 ** Math.min(attempt, 16));
}

/** A one-shot "something changed" signal that can be re-armed; used to wake hold loops on SSE events. */
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
