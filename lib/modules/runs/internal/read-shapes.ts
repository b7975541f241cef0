// The one mapper from a run's row to its read shape (lib/schemas/runs.ts): RunSummary, and the state
// fields RunView adds to it. The API, the console's runs list and run page, and the CLI (over the API)
// all read through here, so a field has one name and one value everywhere (docs/design/read-shapes.md).
import "server-only";
import type { Run } from "../../../generated/prisma/client";
import { displayedBreaker } from "../../../control/breaker";
import type { BreakerState } from "../../../control/types";
import type { RunSummary, RunView } from "../../../schemas/runs";

/** The fields runSummary reads: a Prisma row, or one read on the raw pool (getRunView, the console's list). */
export type SummaryRow = Pick<
  Run,
  | "id"
  | "taskId"
  | "title"
  | "harness"
  | "parentRunId"
  | "rootRunId"
  | "depth"
  | "lifecycle"
  | "breaker"
  | "breakerChangedAt"
  | "breakerProbeOpId"
  | "breakerHeld"
  | "epoch"
  | "createdAt"
  | "lastHeartbeatAt"
  | "isDrill"
>;

/** The breaker is shown as the gate would see it now: an open breaker past its cool-down is half open. */
export function runSummary(r: SummaryRow, now = Date.now()): RunSummary {
  return {
    runId: r.id,
    taskId: r.taskId,
    title: r.title,
    harness: r.harness,
    parentRunId: r.parentRunId,
    rootRunId: r.rootRunId,
    depth: r.depth,
    lifecycle: r.lifecycle,
    breaker: displayedBreaker(
      { state: r.breaker as BreakerState, changedAt: r.breakerChangedAt.getTime(), probeOpId: r.breakerProbeOpId, held: r.breakerHeld },
      now,
    ),
    epoch: r.epoch,
    createdAt: r.createdAt.toISOString(),
    lastHeartbeatAt: r.lastHeartbeatAt?.toISOString() ?? null,
    isDrill: r.isDrill,
  };
}

export type StateRow = Pick<
  Run,
  | "lifecycleChangedAt"
  | "lifecycleChangedBy"
  | "lifecycleReason"
  | "breakerChangedAt"
  | "breakerChangedBy"
  | "breakerReason"
  | "breakerFailures"
  | "nativeSessionId"
  | "nativeAgentId"
  | "nativeThreadId"
  | "nativeTurnId"
  | "lastNativeState"
>;

export type RunState = Omit<RunView, keyof RunSummary | "children" | "leases">;

/** Who changed the lifecycle and the breaker last and why, and the harness's native identities. */
export function runState(r: StateRow): RunState {
  return {
    lifecycleChangedAt: r.lifecycleChangedAt.toISOString(),
    lifecycleChangedBy: r.lifecycleChangedBy,
    lifecycleReason: r.lifecycleReason,
    breakerChangedAt: r.breakerChangedAt.toISOString(),
    breakerChangedBy: r.breakerChangedBy,
    breakerReason: r.breakerReason,
    breakerFailures: r.breakerFailures,
    native: { sessionId: r.nativeSessionId, agentId: r.nativeAgentId, threadId: r.nativeThreadId, turnId: r.nativeTurnId },
    lastNativeState: r.lastNativeState,
  };
}
