// The barrier engine process (`quiesce barrier-worker`, DESIGN.md §2, §6). Wakes on NOTIFY
// quiesce_control (a kill, a settlement, a late report), on the earliest quiet-period end or claim
// expiry it knows of, and on a slow safety poll. Any number of these may run: barriers are claimed
// with an expiring claim (FOR UPDATE SKIP LOCKED), so a crashed engine's barrier is taken over when
// its claim expires. SIGTERM stops claiming, aborts in-flight work and gives claims back.
import { randomBytes } from "node:crypto";
import os from "node:os";
import type pg from "pg";
import { CONTROL_CHANNEL } from "../dal/notify";
import { claimNextBarrier, nextWakeAt } from "../dal/barrier-engine";
import type { Principal } from "../dal/principal";
import { processBarrier, type BarrierOutcome } from "./engine";
import { setting } from "../config";

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
  /** Work only this team's barriers (sharding; side-by-side engines in tests). */
  teamId?: string | null;
  signal: AbortSignal;
  log?: (line: string) => void;
  /** A function returning a dedicated client for LISTEN (not from a pool that recycles it). */
  listenClient?: () => Promise<pg.Client>;
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
  const principal: Principal = { type: "system", name: "barrier-engine" };
  const active = new Map<string, Promise<void>>();
  let wake: () => void = () => {};
  let woken = false;
  const poke = () => { woken = true; wake(); };

  // LISTEN on a dedicated connection; on failure, reconnect later (the safety poll covers the gap).
  let listener: pg.Client | null = null;
  const listen = async () => {
    if (!o.listenClient || o.signal.aborted) return;
    try {
      const c = await o.listenClient();
      c.on("notification", () => poke());
      c.on("error", () => { listener = null; c.end().catch(() => {}); setTimeout(() => void listen(), 1000); });
      await c.query(`LISTEN ${CONTROL_CHANNEL}`);
      listener = c;
    } catch (err) {
      log(`listen failed: ${(err as Error).message}; retrying`);
      setTimeout(() => void listen(), 2000);
    }
  };
  await listen();
  log(`barrier engine ${workerId} started (claim ${claimMs} ms, poll ${pollMs} ms)`);

  try {
    while (!o.signal.aborted) {
      woken = false;
      // Fill free slots with claimable barriers.
      while (active.size < (o.barrierConcurrency ?? 4) && !o.signal.aborted) {
        let claimed;
        try {
          claimed = await claimNextBarrier(principal, workerId, claimMs, [...active.keys()], o.teamId ?? null);
        } catch (err) {
          log(`claim failed: ${(err as Error).message}`);
          break;
        }
        if (!claimed) break;
        const id = claimed.id;
        log(`claimed ${id} (${claimed.phase})`);
        const run = processBarrier(id, {
          principal, workerId, claimMs, localSettleMs: o.localSettleMs ?? d.localSettleMs,
          concurrency: o.settlementConcurrency ?? 16, signal: o.signal, log,
        }).then((outcome) => {
          o.onOutcome?.(id, outcome);
        }).catch((err) => {
          log(`${id}: ${(err as Error).message} (the claim expires; work resumes from the rows)`);
        }).finally(() => { active.delete(id); poke(); });
        active.set(id, run);
      }
      if (woken) continue;
      let waitMs = pollMs;
      try {
        const at = await nextWakeAt(principal, o.teamId ?? null);
        if (at) waitMs = Math.max(50, Math.min(pollMs, at.getTime() - Date.now() + 25));
      } catch { /* poll */ }
      if (woken) continue;
      await new Promise<void>((resolve) => {
        const done = () => { clearTimeout(t); o.signal.removeEventListener("abort", done); resolve(); };
        const t = setTimeout(done, waitMs);
        wake = done;
        o.signal.addEventListener("abort", done, { once: true });
      });
      wake = () => {};
    }
  } finally {
    await Promise.allSettled(active.values());
    if (listener) await (listener as pg.Client).end().catch(() => {});
    log(`barrier engine ${workerId} stopped`);
  }
}
