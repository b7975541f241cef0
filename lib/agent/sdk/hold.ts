// The one hold loop: ask the gate, and while it answers "hold" (the run is paused) wait and ask again,
// with a capped backoff, woken early by a control event, ended by the caller's signal or by a maximum
// hold. Used by the worker guard, the MCP gateway and the Codex bridge; each maps the outcome onto its
// own protocol (a queued job stays queued, an MCP call gets progress and then an answer, a Codex
// approval is declined after too long a hold).
import { setTimeout as delay } from "node:timers/promises";

export interface GateAnswer {
  decision: "allow" | "hold" | "deny";
  reason: string;
}

export type HoldOutcome<D extends GateAnswer> =
  | { kind: "decided"; answer: D; heldMs: number }
  | { kind: "held_too_long"; answer: D; heldMs: number }
  | { kind: "cancelled"; answer: D | null; heldMs: number };

export interface AskGateOptions<D extends GateAnswer> {
  /** The caller gave up (cancel, shutdown). */
  signal?: AbortSignal;
  /**
   * The current wake-up signal (e.g. a Doorbell's): read BEFORE each ask, so a control event that
   * arrives while the gate is being asked ends the following wait at once.
   */
  wake?: () => AbortSignal | undefined;
  /** Longest time to stay held before giving up; default: no limit. */
  maxHoldMs?: number;
  /** Delay before the n-th re-ask (n from 0); default backoffDelay. */
  backoff?: (attempt: number) => number;
  /** Called on every hold answer (MCP progress, logs, counters). */
  onHold?: (answer: D, attempt: number, heldMs: number) => void;
  /** Clock, for tests. */
  now?: () => number;
}

/** Re-ask delays while held: 200 ms doubling to a cap. */
export function backoffDelay(attempt: number, capMs = 2000, baseMs = 200): number {
  return Math.min(capMs, baseMs * 2 ** Math.min(Math.max(attempt, 0), 16));
}

export async function askGate<D extends GateAnswer>(ask: () => Promise<D>, o: AskGateOptions<D> = {}): Promise<HoldOutcome<D>> {
  const now = o.now ?? Date.now;
  const started = now();
  let last: D | null = null;
  for (let attempt = 0; ; attempt++) {
    if (o.signal?.aborted) return { kind: "cancelled", answer: last, heldMs: now() - started };
    const wake = o.wake?.();
    const answer = await ask();
    last = answer;
    const heldMs = now() - started;
    if (answer.decision !== "hold") return { kind: "decided", answer, heldMs };
    o.onHold?.(answer, attempt, heldMs);
    const left = o.maxHoldMs === undefined ? Infinity : o.maxHoldMs - heldMs;
    if (left <= 0) return { kind: "held_too_long", answer, heldMs };
    const ms = Math.min((o.backoff ?? backoffDelay)(attempt), left);
    const stops = [o.signal, wake].filter((s): s is AbortSignal => s !== undefined);
    try {
      await delay(ms, undefined, stops.length ? { signal: AbortSignal.any(stops) } : undefined);
    } catch {
      // woken (control event) or cancelled: the loop head tells which
    }
  }
}
