// Lifecycle state machine (docs/architecture.md#lifecycle-and-breaker, docs/ideas.md#control-state): normal ⇄
// paused; normal | paused → killed (terminal).
// Written only by operator actions. It never reads or writes the breaker: the two are independent state
// machines in two columns, so a paused run whose dependency is failing shows both facts.
import type { Lifecycle } from "./types";

export const LIFECYCLE_ACTIONS = ["pause", "resume", "kill"] as const;
export type LifecycleAction = (typeof LIFECYCLE_ACTIONS)[number];

export type LifecycleRefusalCode = "killed_is_terminal";

export type LifecycleResult =
  /** `changed: false` means the run is already where the action leads (a repeated click): write nothing. */
  { ok: true; state: Lifecycle; changed: boolean } | { ok: false; code: LifecycleRefusalCode; message: string };

/**
 * The only lifecycle transition function. Repeats are idempotent (pause on paused, resume on normal,
 * kill on killed answer `changed: false`) so two operators pressing the same button do not get an error;
 * the one refusal is leaving `killed` — a kill is terminal and a killed run is never resumed or paused.
 */
export function applyLifecycle(state: Lifecycle, action: LifecycleAction): LifecycleResult {
  if (state === "killed") {
    if (action === "kill") return { ok: true, state, changed: false };
    return { ok: false, code: "killed_is_terminal", message: `cannot ${action} a killed run: kill is terminal` };
  }
  const next: Lifecycle = action === "pause" ? "paused" : action === "resume" ? "normal" : "killed";
  return { ok: true, state: next, changed: next !== state };
}

/** The lifecycle columns of a run (times as epoch ms). */
export interface LifecycleRecord {
  lifecycle: Lifecycle;
  changedAt: number;
  changedBy: string | null;
  reason: string | null;
}

/**
 * Applies an action to a run's lifecycle record and returns a new record (the input is not mutated).
 * Takes only the lifecycle record so it cannot touch breaker fields by construction.
 */
export function applyLifecycleRecord(
  record: LifecycleRecord,
  action: LifecycleAction,
  meta: { now: number; by: string; reason: string },
): { ok: true; record: LifecycleRecord; changed: boolean } | { ok: false; code: LifecycleRefusalCode; message: string } {
  const r = applyLifecycle(record.lifecycle, action);
  if (!r.ok) return r;
  if (!r.changed) return { ok: true, record, changed: false };
  return { ok: true, changed: true, record: { lifecycle: r.state, changedAt: meta.now, changedBy: meta.by, reason: meta.reason } };
}
