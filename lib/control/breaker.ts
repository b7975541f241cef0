// Circuit breaker state machine (docs/architecture.md#lifecycle-and-breaker, docs/ideas.md#control-state):
// closed → open (N failures within a window, or
// an explicit trip); open → half_open after a cool-down; half_open admits exactly one probe; probe
// success → closed, failure → open; explicit reset → closed. Written by runtime transitions and explicit
// breaker actions only — never by lifecycle actions, and it never touches lifecycle.
//
// open → half_open is lazy: nothing wakes up when the cool-down ends. `effectiveBreaker(record, now)`
// says what the breaker is *now*; the gate claims the probe (state half_open, probeOpId = the operation)
// in the same transaction that allows it. A probe that never reports back frees the slot again after
// `probeTimeoutMs`, so a lost probe cannot wedge the run forever.
import type { BreakerState } from "./types";

export interface BreakerConfig {
  /** Failures inside one window that trip the breaker. */
  failureThreshold: number;
  windowMs: number;
  /** Time an open breaker stays open before one probe is admitted. */
  coolDownMs: number;
  /** A claimed probe that has not reported after this long is presumed lost; another probe may go. */
  probeTimeoutMs: number;
}

export const BREAKER_DEFAULTS: BreakerConfig = {
  failureThreshold: 5,
  windowMs: 60_000,
  coolDownMs: 30_000,
  probeTimeoutMs: 60_000,
};

/**
 * The breaker columns of a run (runs.breaker, breaker_changed_at, breaker_failures, breaker_probe_op_id,
 * breaker_changed_by, breaker_reason). While `closed`, `changedAt` is the start of the current failure
 * window (a window restart moves it; the state stays closed) — so no extra column is needed.
 * `probeOpId` is the caller's operationId of the admitted probe.
 */
export interface BreakerRecord {
  state: BreakerState;
  changedAt: number;
  failures: number;
  probeOpId: string | null;
  changedBy: string | null;
  reason: string | null;
  /** Tripped by an operator: stays open, with no cool-down probe, until an operator resets it. */
  held?: boolean;
}

export type EffectiveBreaker =
  | { state: "closed" }
  /** Open inside its cool-down, or half_open with a live probe in flight: deny. */
  | { state: "blocked"; until: number }
  /** The cool-down has passed (or the last probe was lost): exactly one caller may go, as the probe. */
  | { state: "probe_available" }
  /** half_open and the asking operation is the probe itself. */
  | { state: "probe_owned" };

export function effectiveBreaker(
  b: Pick<BreakerRecord, "state" | "changedAt" | "probeOpId" | "held">,
  now: number,
  operationId: string | null = null,
  config: Pick<BreakerConfig, "coolDownMs" | "probeTimeoutMs"> = BREAKER_DEFAULTS,
): EffectiveBreaker {
  if (b.state === "closed") return { state: "closed" };
  if (b.state === "open") {
    if (b.held) return { state: "blocked", until: Number.POSITIVE_INFINITY };
    const until = b.changedAt + config.coolDownMs;
    return now < until ? { state: "blocked", until } : { state: "probe_available" };
  }
  if (b.probeOpId === null) return { state: "probe_available" };
  if (operationId !== null && b.probeOpId === operationId) return { state: "probe_owned" };
  const until = b.changedAt + config.probeTimeoutMs;
  return now < until ? { state: "blocked", until } : { state: "probe_available" };
}

/** What the console shows: the lazy open → half_open transition applied. */
export function displayedBreaker(
  b: Pick<BreakerRecord, "state" | "changedAt" | "probeOpId" | "held">,
  now: number,
  config = BREAKER_DEFAULTS,
): BreakerState {
  if (b.state === "open" && !b.held && now >= b.changedAt + config.coolDownMs) return "half_open";
  return b.state;
}

/** The record the gate writes when it admits `operationId` as the probe. */
export function claimProbe(b: BreakerRecord, operationId: string, now: number): BreakerRecord {
  return { ...b, state: "half_open", probeOpId: operationId, changedAt: now, changedBy: "gate", reason: "probe admitted" };
}

export type BreakerAction = "trip" | "reset";

export function applyBreakerAction(
  b: BreakerRecord,
  action: BreakerAction,
  meta: { now: number; by: string; reason: string },
): { record: BreakerRecord; changed: boolean } {
  const target: BreakerState = action === "trip" ? "open" : "closed";
  // A repeated trip restarts the cool-down on purpose: the operator is saying "not yet".
  if (action === "reset" && b.state === "closed" && b.failures === 0 && b.probeOpId === null) return { record: b, changed: false };
  // An operator's trip is held: only an operator's reset closes it (no automatic probe).
  return {
    changed: true,
    record: {
      state: target,
      changedAt: meta.now,
      failures: 0,
      probeOpId: null,
      changedBy: meta.by,
      reason: meta.reason,
      held: action === "trip",
    },
  };
}

export type BreakerTransition = "tripped" | "probe_succeeded" | "probe_failed" | "counted" | "window_restarted" | null;

/**
 * Called by the operations API when an operation completes (after `complete`). Counts failures of
 * the run's own operations; resolves the probe on whichever run (the operation's or an ancestor's)
 * admitted it as its probe. Pass `own: false` for an ancestor so its failure window is not charged
 * with a descendant's failures.
 */
export function breakerAfterOutcome(
  b: BreakerRecord,
  o: { operationId: string; outcome: "succeeded" | "failed"; own?: boolean },
  now: number,
  config: BreakerConfig = BREAKER_DEFAULTS,
): { record: BreakerRecord; changed: boolean; transition: BreakerTransition } {
  if (b.held) return { record: b, changed: false, transition: null };
  if (b.state === "half_open" && b.probeOpId === o.operationId) {
    if (o.outcome === "succeeded") {
      return {
        changed: true,
        transition: "probe_succeeded",
        record: {
          state: "closed",
          changedAt: now,
          failures: 0,
          probeOpId: null,
          changedBy: "runtime",
          reason: "probe succeeded",
          held: false,
        },
      };
    }
    return {
      changed: true,
      transition: "probe_failed",
      record: {
        state: "open",
        changedAt: now,
        failures: b.failures + 1,
        probeOpId: null,
        changedBy: "runtime",
        reason: "probe failed",
        held: false,
      },
    };
  }
  if (o.own === false || b.state !== "closed" || o.outcome === "succeeded") return { record: b, changed: false, transition: null };
  const windowOver = b.failures === 0 || now - b.changedAt >= config.windowMs;
  const failures = windowOver ? 1 : b.failures + 1;
  if (failures >= config.failureThreshold) {
    return {
      changed: true,
      transition: "tripped",
      record: {
        state: "open",
        changedAt: now,
        failures,
        probeOpId: null,
        changedBy: "runtime",
        reason: `${failures} failures within ${config.windowMs / 1000}s`,
        held: false,
      },
    };
  }
  if (windowOver) return { changed: true, transition: "window_restarted", record: { ...b, changedAt: now, failures } };
  return { changed: true, transition: "counted", record: { ...b, failures } };
}
