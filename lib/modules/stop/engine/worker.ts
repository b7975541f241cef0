// The barrier engine process (`quiesce barrier-worker`). It also runs pause reclaim (lib/modules/pause-reclaim)
// on every wake and sleeps no longer than the next pause falls due. Wakes on NOTIFY
// quiesce_control (a kill, a settlement, a late report), on the earliest quiet-period end or claim
// expiry it knows of, and on a slow safety poll. Any number of these may run: barriers are claimed
// with an expiring claim (FOR UPDATE SKIP LOCKED), so a crashed engine's barrier is taken over when
// its claim expires. SIGTERM stops claiming, aborts in-flight work and gives claims back.
import "server-only";
import { randomBytes } from "node:crypto";
import os from "node:os";
import { claimBarriers, nextWakeAt } from "./claim";
import { nextPauseReclaimAt, reclaimOverduePauses } from "../../runs/pause-reclaim";
import { advancePendingStops } from "../stops";
import type { Principal } from "../../../platform/auth/principal";
import { processBarriers, type BarrierOutcome } from "./engine";
import { announceOverdueRecoveries } from "../recovery";
import { sweepApprovals } from "../../approvals/approvals";

const OVERDUE_SWEEP_MS = 30_000;
// A new card reaches chat tools within this (the gate writes it; the sweep announces it).
const APPROVAL_SWEEP_MS = 1_000;
import { recordPeriodicCheckpoints } from "../../audit/audit-verify";
import { setting } from "../../../platform/config";
import { ControlListener } from "../../../platform/db/listen";
import { Doorbell, sleep } from "../../../platform/wait";

export interface WorkerOptions {
  workerId?: string;
  /** Claim lifetime; another engine may take over this long after we stop renewing. */
  claimMs?: number;
  /** Safety poll when no notification arrives. */
  pollMs?: number;
  localSettleMs?: number;
  /** Barriers worked on at once, and settlements per barrier. */
  barrierConcurrency?: number;
  settlementConcurrency?: number;
  /** Barriers claimed and stepped together at most (QUIESCE_FLEET_BATCH_SIZE); 1 = one at a time. */
  batchSize?: number;
  /** Work only this team's barriers (sharding; side-by-side engines in tests). */
  teamId?: string | null;
  signal: AbortSignal;
  log?: (line: string) => void;
  /** Wake on control notifications (the shared LISTEN client); without it, only the timers and the poll. */
  listen?: boolean;
  onOutcome?: (barrierId: string, outcome: BarrierOutcome) => void;
}

export function workerDefaults() {
  return {
    claimMs: setting("QUIESCE_BARRIER_CLAIM_MS"),
    pollMs: setting("QUIESCE_BARRIER_POLL_MS"),
    localSettleMs: setting("QUIESCE_LOCAL_SETTLE_MS"),
  };
}

export async function runBarrierWorker(o: WorkerOptions): Promise<void> {
  const d = workerDefaults();
  const workerId = o.workerId ?? `engine:${os.hostname()}:${process.pid}:${randomBytes(3).toString("hex")}`;
  const claimMs = o.claimMs ?? d.claimMs;
  const pollMs = o.pollMs ?? d.pollMs;
  const log = o.log ?? (() => {});
  const barrierConcurrency = o.barrierConcurrency ?? setting("QUIESCE_BARRIER_CONCURRENCY");
  const principal: Principal = { type: "system", name: "barrier-engine" };
  const active = new Map<string, Promise<void>>();
  const claimedIds = new Set<string>();
  const batchSize = o.batchSize ?? setting("QUIESCE_FLEET_BATCH_SIZE");
  let fanOut: Promise<void> | null = null;
  const bell = new Doorbell();
  let woken = false;
  const poke = () => {
    woken = true;
    bell.ring();
  };
  o.signal.addEventListener("abort", poke, { once: true });

  // Every control notification (and a resync after the LISTEN connection comes back) wakes the loop.
  // If the first connection fails, the claim loop still runs on its timers and the safety poll, and
  // the listener is retried each round.
  const listener = o.listen ? new ControlListener({ log, applicationName: "quiesce-barrier-engine", idleCloseMs: 2_147_483_647 }) : null;
  let listening = false;
  const listen = async () => {
    if (!listener || listening || o.signal.aborted) return;
    try {
      await listener.subscribe("*", () => poke());
      listening = true;
    } catch (err) {
      log(`listen failed: ${(err as Error).message}; the safety poll covers the gap`);
    }
  };
  await listen();
  log(`barrier engine ${workerId} started (claim ${claimMs} ms, poll ${pollMs} ms)`);

  // Periodic audit checkpoints (heads of every chain, kept apart from it) ride on the engine's loop.
  const checkpointMs = setting("QUIESCE_AUDIT_CHECKPOINT_SECONDS") * 1000;
  let lastCheckpoint = 0;
  let lastOverdueSweep = 0;
  let lastApprovalSweep = 0;
  try {
    while (!o.signal.aborted) {
      woken = false;
      // Pause reclaim: a tree paused past its team's policy is killed as the system (a new barrier).
      try {
        for (const r of await reclaimOverduePauses(principal, o.teamId ?? null))
          log(
            `pause reclaim: killed ${r.runId} (paused since ${r.pausedSince.toISOString()}, policy ${r.policySeconds} s) → ${r.barrierId}`,
          );
      } catch (err) {
        log(`pause reclaim failed: ${(err as Error).message}`);
      }
      // Recovery items past their due time are announced once (recovery.overdue); a due time is hours
      // away, so a look every half minute is soon enough.
      if (Date.now() - lastOverdueSweep >= OVERDUE_SWEEP_MS) {
        lastOverdueSweep = Date.now();
        try {
          for (const r of await announceOverdueRecoveries(principal, o.teamId ?? null)) log(`recovery ${r.id} is overdue: announced`);
        } catch (err) {
          log(`overdue recovery sweep failed: ${(err as Error).message}`);
        }
      }
      // Approvals: expire the ones past their deadline, void those whose lease lapsed, announce new cards.
      if (Date.now() - lastApprovalSweep >= APPROVAL_SWEEP_MS) {
        lastApprovalSweep = Date.now();
        try {
          const s = await sweepApprovals(principal, o.teamId ?? null);
          if (s.expired + s.voided + s.announced > 0)
            log(`approvals: ${s.announced} announced, ${s.expired} expired, ${s.voided} voided (lease lapsed)`);
        } catch (err) {
          log(`approval sweep failed: ${(err as Error).message}`);
        }
      }
      // Fleet stops: start the barriers of kill scopes not yet fanned out (docs/fleet-stop.md). In the
      // background: the loop goes on claiming the barriers already started while the rest are (a fan-out
      // of thousands awaited here would hold every receipt back until the last barrier had started).
      if (!fanOut) {
        fanOut = advancePendingStops(principal, o.teamId ?? null, o.signal)
          .then((n) => {
            if (n > 0) {
              log(`fleet stop: started ${n} barrier(s)`);
              poke(); // scopes committed meanwhile, and the fleet receipts due
            }
          })
          .catch((err: unknown) => log(`fleet stop fan-out failed: ${(err as Error).message}`))
          .finally(() => {
            fanOut = null;
          });
      }
      if (checkpointMs > 0 && !o.teamId && Date.now() - lastCheckpoint >= checkpointMs) {
        lastCheckpoint = Date.now();
        recordPeriodicCheckpoints(principal).catch((err) => log(`audit checkpoint failed: ${(err as Error).message}`));
      }
      // Fill free slots with claimable barriers: what is claimable together is claimed together (up to
      // QUIESCE_FLEET_BATCH_SIZE) and stepped as one batch in one slot (processBarriers).
      while (active.size < barrierConcurrency && !o.signal.aborted) {
        let claimed;
        try {
          claimed = await claimBarriers(principal, workerId, claimMs, [...claimedIds], o.teamId ?? null, batchSize);
        } catch (err) {
          log(`claim failed: ${(err as Error).message}`);
          break;
        }
        if (claimed.length === 0) break;
        const ids = claimed.map((c) => c.id);
        const key = ids.length === 1 ? ids[0]! : `batch:${ids[0]}`;
        log(ids.length === 1 ? `claimed ${ids[0]} (${claimed[0]!.phase})` : `claimed a batch of ${ids.length}`);
        for (const id of ids) claimedIds.add(id);
        const engineOpts = {
          principal,
          workerId,
          claimMs,
          localSettleMs: o.localSettleMs ?? d.localSettleMs,
          concurrency: o.settlementConcurrency ?? 16,
          signal: o.signal,
          log,
        };
        const run = processBarriers(ids, engineOpts, (id, outcome) => o.onOutcome?.(id, outcome))
          .catch((err) => {
            log(`${key}: ${(err as Error).message} (the claim expires; work resumes from the rows)`);
          })
          .finally(() => {
            active.delete(key);
            for (const id of ids) claimedIds.delete(id);
            poke();
          });
        active.set(key, run);
      }
      if (woken) continue;
      let waitMs = pollMs;
      try {
        const [at, reclaimAt] = await Promise.all([
          nextWakeAt(principal, o.teamId ?? null),
          nextPauseReclaimAt(principal, o.teamId ?? null),
        ]);
        for (const t of [at, reclaimAt]) if (t) waitMs = Math.max(50, Math.min(waitMs, t.getTime() - Date.now() + 25));
      } catch {
        /* poll */
      }
      if (woken) continue;
      await sleep(waitMs, undefined, bell.signal);
      await listen();
    }
  } finally {
    await Promise.allSettled([...active.values(), fanOut]);
    await listener?.close();
    log(`barrier engine ${workerId} stopped`);
  }
}
