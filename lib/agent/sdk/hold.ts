// The one hold loop: ask the gate, and while it answers "hold" wait and ask again, ended by a decision,
// the caller's signal or a maximum hold. A pause is re-asked with a capped backoff, woken early by a
// control event; a call waiting for a person's approval is re-asked when an event wakes it (the
// approval's answer sends one) and otherwise only every `approvalRecheckMs` (an approval that expires
// sends none). Used by the worker guard, the Claude Code hook, the MCP gateway and the Codex bridge; each
// maps the outcome onto its own protocol (docs/adapters.md#approvals-and-budgets).
import { setTimeout as delay } from "node:timers/promises";

export interface GateAnswer {
  decision: "allow" | "hold" | "deny";
  reason: string;
  /** On awaiting_approval, approval_denied, approval_expired: the approval this call is bound to. */
  approvalId?: string;
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
  /** Longest time to stay held by a pause (or any hold but an approval's) before giving up; default: no limit. */
  maxHoldMs?: number;
  /** Longest time to wait for a person's answer to an approval; default maxHoldMs. */
  maxApprovalWaitMs?: number;
  /** While waiting for an approval, re-ask this often when nothing woke the wait; default 10 s. */
  approvalRecheckMs?: number;
  /**
   * Called once per approval the call starts waiting for (a pause voids one, and the call then waits
   * for a new one): the caller names it to whoever can answer. Awaited; the gate is asked again right
   * after, so an event stream opened here cannot miss an answer given meanwhile.
   */
  onApproval?: (approvalId: string, answer: D) => void | Promise<void>;
  /** Delay before the n-th re-ask (n from 0) while held by a pause; default backoffDelay. */
  backoff?: (attempt: number) => number;
  /** Called on every hold answer (MCP progress, logs, counters). */
  onHold?: (answer: D, attempt: number, heldMs: number) => void;
  /** Clock, for tests. */
  now?: () => number;
}

export const DEFAULT_APPROVAL_RECHECK_MS = 10_000;

/** Re-ask delays while held: 200 ms doubling to a cap. */
export function backoffDelay(attempt: number, capMs = 2000, baseMs = 200): number {
  return Math.min(capMs, baseMs * 2 ** Math.min(Math.max(attempt, 0), 16));
}

export async function askGate<D extends GateAnswer>(ask: () => Promise<D>, o: AskGateOptions<D> = {}): Promise<HoldOutcome<D>> {
  const now = o.now ?? Date.now;
  const started = now();
  let last: D | null = null;
  // Each kind of hold has its own limit, counted from when it began: a pause that voids an approval
  // gets the whole pause limit, and a new approval after a resume the whole approval wait.
  let phase: "approval" | "hold" | null = null;
  let phaseStart = started;
  let pauseAttempt = 0;
  const approvals = new Set<string>();
  for (let attempt = 0; ; attempt++) {
    if (o.signal?.aborted) return { kind: "cancelled", answer: last, heldMs: now() - started };
    const wake = o.wake?.();
    const answer = await ask();
    last = answer;
    const heldMs = now() - started;
    if (answer.decision !== "hold") return { kind: "decided", answer, heldMs };
    o.onHold?.(answer, attempt, heldMs);
    const p = answer.reason === "awaiting_approval" ? "approval" : "hold";
    if (p !== phase) [phase, phaseStart, pauseAttempt] = [p, now(), 0];
    const limit = p === "approval" ? (o.maxApprovalWaitMs ?? o.maxHoldMs) : o.maxHoldMs;
    const left = limit === undefined ? Infinity : limit - (now() - phaseStart);
    if (left <= 0) return { kind: "held_too_long", answer, heldMs };
    if (p === "approval" && answer.approvalId && !approvals.has(answer.approvalId)) {
      approvals.add(answer.approvalId);
      await o.onApproval?.(answer.approvalId, answer);
      continue;
    }
    const ms = Math.min(
      p === "approval" ? (o.approvalRecheckMs ?? DEFAULT_APPROVAL_RECHECK_MS) : (o.backoff ?? backoffDelay)(pauseAttempt++),
      left,
    );
    const stops = [o.signal, wake].filter((s): s is AbortSignal => s !== undefined);
    try {
      await delay(ms, undefined, stops.length ? { signal: AbortSignal.any(stops) } : undefined);
    } catch {
      // woken (control event) or cancelled: the loop head tells which
    }
  }
}
