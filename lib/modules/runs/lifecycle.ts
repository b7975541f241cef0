// Operator lifecycle actions: pause / resume (docs/architecture.md#lifecycle-and-breaker). Kill is lib/modules/stop/kill.ts (the barrier).
// Each write: authorize → take the run tree's lock EXCLUSIVELY (so a gate decision either sees the
// change or committed before it) → apply the pure transition → write ONLY the lifecycle columns →
// audit row + NOTIFY in the same transaction. Lifecycle never touches the breaker columns.
import "server-only";
import { prisma } from "../../platform/db/prisma";
import { QuiesceError, requiredReason } from "../../platform/errors";
import { applyLifecycleRecord, type LifecycleAction } from "../../control/lifecycle";
import type { Lifecycle } from "../../control/types";
import type { LifecycleResponse } from "../../schemas/control";
import { appendAudit } from "../audit/audit";
import { lockRunOfTeam } from "../../platform/db/locks";
import { notifyControl } from "../../platform/db/notify";
import { actorOf, type Principal } from "../../platform/auth/principal";
import { authorize } from "../../platform/auth/authorize";
import { emitEventTx } from "../webhooks/emit";

async function applyAction(
  p: Principal,
  runId: string,
  action: Exclude<LifecycleAction, "kill">,
  reason: string,
): Promise<LifecycleResponse> {
  authorize(p, action === "pause" ? "run.pause" : "run.resume");
  const why = requiredReason(reason);
  const actor = actorOf(p);
  return prisma().$transaction(async (tx) => {
    await lockRunOfTeam(tx, p, runId);
    // Re-read under the lock: a kill may have committed while we waited for it.
    const r = await tx.run.findUniqueOrThrow({
      where: { id: runId },
      select: { lifecycle: true, lifecycleChangedAt: true, lifecycleChangedBy: true, lifecycleReason: true, teamId: true, rootRunId: true },
    });
    const before = {
      lifecycle: r.lifecycle as Lifecycle,
      changedAt: r.lifecycleChangedAt.getTime(),
      changedBy: r.lifecycleChangedBy,
      reason: r.lifecycleReason,
    };
    const now = Date.now();
    const next = applyLifecycleRecord(before, action, { now, by: actor, reason: why });
    if (!next.ok) throw new QuiesceError("conflict", next.message);
    if (!next.changed) {
      return {
        runId,
        lifecycle: before.lifecycle,
        changedAt: r.lifecycleChangedAt.toISOString(),
        changedBy: before.changedBy,
        reason: before.reason,
        changed: false,
      };
    }
    const rec = next.record;
    await tx.run.update({
      where: { id: runId },
      data: {
        lifecycle: rec.lifecycle,
        lifecycleChangedAt: new Date(rec.changedAt),
        lifecycleChangedBy: rec.changedBy,
        lifecycleReason: rec.reason,
      },
    });
    await appendAudit(tx, {
      teamId: r.teamId,
      actor,
      action: `run.${action}`,
      target: runId,
      before: { lifecycle: before.lifecycle },
      after: { lifecycle: rec.lifecycle, reason: why },
    });
    await emitEventTx(tx, {
      teamId: r.teamId,
      type: action === "pause" ? "run.paused" : "run.resumed",
      runId,
      data: { lifecycle: rec.lifecycle, by: actor, reason: why },
    });
    await notifyControl(tx, { kind: action, teamId: r.teamId, rootRunId: r.rootRunId, runIds: [runId] });
    return {
      runId,
      lifecycle: rec.lifecycle,
      changedAt: new Date(rec.changedAt).toISOString(),
      changedBy: rec.changedBy,
      reason: rec.reason,
      changed: true,
    };
  });
}

/** Pause: the run's and its descendants' NEXT gate call holds (in-flight work is not interrupted). */
export function pauseRun(p: Principal, runId: string, reason: string): Promise<LifecycleResponse> {
  return applyAction(p, runId, "pause", reason);
}

/** Resume: back to normal; the next gate call is decided afresh. A killed run answers 409. */
export function resumeRun(p: Principal, runId: string, reason: string): Promise<LifecycleResponse> {
  return applyAction(p, runId, "resume", reason);
}
