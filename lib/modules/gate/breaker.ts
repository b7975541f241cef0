// Explicit breaker actions (trip / reset) and the runtime transition after an operation's outcome
// (docs/architecture.md#lifecycle-and-breaker). Breaker writes touch ONLY the breaker columns, never lifecycle. Explicit actions take
// the tree lock exclusively, audit and notify in the same transaction.
import "server-only";
import { prisma, type Tx } from "../../platform/db/prisma";
import { badRequest, requiredReason } from "../../platform/errors";
import { applyBreakerAction, breakerAfterOutcome, displayedBreaker, type BreakerAction, type BreakerRecord } from "../../control/breaker";
import type { BreakerState } from "../../control/types";
import type { BreakerResponse } from "../../schemas/control";
import { appendAudit } from "../audit/audit";
import { lockRunOfTeam } from "../../platform/db/locks";
import { notifyControl } from "../../platform/db/notify";
import { emitEventTx } from "../webhooks/emit";
import { actorOf, type Principal } from "../../platform/auth/principal";
import { authorize } from "../../platform/auth/authorize";

const BREAKER_SELECT = {
  id: true,
  teamId: true,
  rootRunId: true,
  breaker: true,
  breakerChangedAt: true,
  breakerFailures: true,
  breakerProbeOpId: true,
  breakerChangedBy: true,
  breakerReason: true,
  breakerHeld: true,
} as const;

type BreakerRow = {
  breaker: string;
  breakerChangedAt: Date;
  breakerFailures: number;
  breakerProbeOpId: string | null;
  breakerChangedBy: string | null;
  breakerReason: string | null;
  breakerHeld: boolean;
};

function recordOf(r: BreakerRow): BreakerRecord {
  return {
    state: r.breaker as BreakerState,
    changedAt: r.breakerChangedAt.getTime(),
    failures: r.breakerFailures,
    probeOpId: r.breakerProbeOpId,
    changedBy: r.breakerChangedBy,
    reason: r.breakerReason,
    held: r.breakerHeld,
  };
}

function columnsOf(b: BreakerRecord) {
  return {
    breaker: b.state,
    breakerChangedAt: new Date(b.changedAt),
    breakerFailures: b.failures,
    breakerProbeOpId: b.probeOpId,
    breakerChangedBy: b.changedBy,
    breakerReason: b.reason,
    breakerHeld: b.held ?? false,
  };
}

export async function setBreaker(p: Principal, runId: string, action: BreakerAction, reason: string): Promise<BreakerResponse> {
  if (action !== "trip" && action !== "reset") throw badRequest("action: must be trip or reset");
  authorize(p, action === "trip" ? "breaker.trip" : "breaker.reset");
  const why = requiredReason(reason);
  const actor = actorOf(p);
  return prisma().$transaction(async (tx) => {
    await lockRunOfTeam(tx, p, runId);
    const r = await tx.run.findUniqueOrThrow({ where: { id: runId }, select: BREAKER_SELECT });
    const before = recordOf(r);
    const now = Date.now();
    const { record, changed } = applyBreakerAction(before, action, { now, by: actor, reason: why });
    if (changed) {
      await tx.run.update({ where: { id: runId }, data: columnsOf(record) });
      await appendAudit(tx, {
        teamId: r.teamId,
        actor,
        action: `breaker.${action}`,
        target: runId,
        before: { breaker: before.state, failures: before.failures },
        after: { breaker: record.state, failures: record.failures, reason: why, held: record.held ?? false },
      });
      if (record.state !== before.state && (record.state === "open" || record.state === "closed")) {
        await emitEventTx(tx, {
          teamId: r.teamId,
          type: record.state === "open" ? "breaker.opened" : "breaker.closed",
          runId,
          data: { breaker: record.state, by: actor, reason: why },
        });
      }
      await notifyControl(tx, { kind: "breaker", teamId: r.teamId, rootRunId: r.rootRunId, runIds: [runId] });
    }
    return {
      runId,
      breaker: displayedBreaker(record, now),
      changedAt: new Date(record.changedAt).toISOString(),
      changedBy: record.changedBy,
      reason: record.reason,
      failures: record.failures,
      changed,
    };
  });
}

/**
 * Runtime transition after an operation finishes: counts the failure on the operation's own run and
 * resolves a half-open probe on whichever run of the ancestry admitted it. Call inside the completing
 * transaction, which already holds the tree lock. Returns the operation's own run's breaker now.
 */
export async function applyBreakerOutcome(
  tx: Tx,
  o: { teamId: string; rootRunId: string; runPath: readonly string[]; operationId: string; outcome: "succeeded" | "failed"; actor: string },
): Promise<BreakerState> {
  const rows = await tx.run.findMany({ where: { id: { in: [...o.runPath] }, teamId: o.teamId }, select: BREAKER_SELECT });
  const ownId = o.runPath[o.runPath.length - 1];
  const now = Date.now();
  let own: BreakerState = "closed";
  const changedRuns: string[] = [];
  for (const r of rows) {
    const before = recordOf(r);
    const next = breakerAfterOutcome(before, { operationId: o.operationId, outcome: o.outcome, own: r.id === ownId }, now);
    if (next.changed) {
      await tx.run.update({ where: { id: r.id }, data: columnsOf(next.record) });
      // Counting a failure is bookkeeping; a state change is a control change and is audited.
      if (next.record.state !== before.state) {
        changedRuns.push(r.id);
        await appendAudit(tx, {
          teamId: o.teamId,
          actor: "system:breaker",
          action: `breaker.${next.transition}`,
          target: r.id,
          before: { breaker: before.state, failures: before.failures },
          after: { breaker: next.record.state, failures: next.record.failures, operationId: o.operationId, reportedBy: o.actor },
        });
        if (next.record.state === "open" || next.record.state === "closed") {
          await emitEventTx(tx, {
            teamId: o.teamId,
            type: next.record.state === "open" ? "breaker.opened" : "breaker.closed",
            runId: r.id,
            data: { breaker: next.record.state, failures: next.record.failures, operation_id: o.operationId, by: "system:breaker" },
          });
        }
      }
    }
    if (r.id === ownId) own = displayedBreaker(next.record, now);
  }
  if (changedRuns.length) await notifyControl(tx, { kind: "breaker", teamId: o.teamId, rootRunId: o.rootRunId, runIds: changedRuns });
  return own;
}
