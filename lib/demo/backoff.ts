// The demo agents talk to the control plane like a real agent would: when it cannot be reached
// (restarting web app, brief outage) they do NOT act, log once, back off and ask again — an
// unreachable control plane is never a pass (docs/architecture.md#integrations-fail-closed).
import { QuiesceApiError, QuiesceUnreachableError } from "../agent/sdk/errors";
import { ControlUnavailableError } from "../agent/sdk/worker/guard";
import { backoffDelay, sleep } from "../platform/wait";

export function isTransient(err: unknown): boolean {
  return (
    err instanceof QuiesceUnreachableError ||
    err instanceof ControlUnavailableError ||
    (err instanceof QuiesceApiError && (err.status >= 500 || err.status === 429))
  );
}

/** The demo's waits end quietly when the fleet stops. */
export const pause = (ms: number, stop?: AbortSignal): Promise<void> => sleep(ms, undefined, stop);

/** One shared outage state per process, so an outage is logged once, not once per agent. */
export class Outage {
  private down = false;
  constructor(private readonly log: (m: string) => void) {}
  failed(err: unknown): void {
    if (!this.down) this.log(`control plane unreachable (${(err as Error).message}); backing off`);
    this.down = true;
  }
  ok(): void {
    if (this.down) this.log("control plane reachable again; continuing");
    this.down = false;
  }
}

/** Runs `fn` until it answers, backing off 1 s → 30 s on transient failures; rethrows the rest. */
export async function withBackoff<T>(fn: () => Promise<T>, outage: Outage, signal: AbortSignal): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      const v = await fn();
      outage.ok();
      return v;
    } catch (err) {
      if (!isTransient(err) || signal.aborted) throw err;
      outage.failed(err);
      await pause(backoffDelay(attempt, { baseMs: 1000, capMs: 30_000 }), signal);
    }
  }
}

export const between = (lo: number, hi: number) => Math.round(lo + Math.random() * (hi - lo));
export const pick = <T>(xs: readonly T[]): T => xs[Math.floor(Math.random() * xs.length)]!;
