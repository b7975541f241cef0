// One Quiesce run per Codex thread (a child of --run when given), registered when the thread's first
// turn starts (so the run carries the native thread AND turn ids). Each run is watched over the
// event stream (plus a slow safety-net check while a turn is active); when it is killed the bridge
// interrupts the thread's active turns. "Observed by target" is reported ONLY when turn/completed
// arrives with status "interrupted" — an interrupt that is never completed leaves the stop ladder
// pending / uncertain, which is the truth.
import type { QuiesceClient } from "../../sdk/client";
import { subscribe } from "../../sdk/events";
import type { AdapterConfig } from "../common/config";
import { describeError } from "../common/control";
import { Doorbell } from "../../../platform/wait";

export interface RunBinding {
  runId: string;
  leaseId: string;
  epoch: number;
}

export interface ThreadState {
  threadId: string;
  activeTurns: Set<string>;
  /** turnId → when turn/interrupt was sent */
  interrupts: Map<string, string>;
  killed: boolean;
  binding: Promise<RunBinding> | null;
  runId?: string;
  /** thread/fork: the thread this one was forked from (its run's stop applies here too). */
  forkedFrom?: string;
}

export interface TrackerDeps {
  cfg: AdapterConfig;
  client: QuiesceClient;
  parentRunId?: string;
  parentLeaseId?: string;
  taskId?: string;
  recheckMs?: number;
  log: (m: string) => void;
  /** Sends turn/interrupt for (threadId, turnId) to the app-server. */
  interrupt: (threadId: string, turnId: string) => void;
  /** Called when a thread's run turns out killed (cancel held approvals etc.). */
  onKilled: (t: ThreadState) => void;
}

export class ThreadTracker {
  private readonly threads = new Map<string, ThreadState>();
  readonly doorbell = new Doorbell();
  private readonly stop = new AbortController();
  private readonly tick: NodeJS.Timeout;

  constructor(private readonly d: TrackerDeps) {
    this.tick = setInterval(() => {
      for (const t of this.threads.values()) if (t.activeTurns.size > 0 && t.runId) void this.check(t);
    }, d.recheckMs ?? 5000);
  }

  get(threadId: string): ThreadState {
    let t = this.threads.get(threadId);
    if (!t) {
      t = { threadId, activeTurns: new Set(), interrupts: new Map(), killed: false, binding: null };
      this.threads.set(threadId, t);
    }
    return t;
  }

  /** The thread's run, registered on first use (idempotent on the native thread id). */
  ensureRun(t: ThreadState, turnId?: string): Promise<RunBinding> {
    t.binding ??= (async () => {
      // A forked thread is registered as forked from its source's run (a child of it), not under --run.
      const source = t.forkedFrom ? this.threads.get(t.forkedFrom) : undefined;
      const sourceRunId = source?.binding ? (await source.binding.catch(() => null))?.runId : undefined;
      let r;
      try {
        r = await this.d.client.createRun({
          taskId: this.d.taskId ?? `codex:${t.threadId}`,
          title: `Codex thread ${t.threadId}${t.forkedFrom ? ` (forked from ${t.forkedFrom})` : ""}`,
          harness: "codex",
          ...(t.forkedFrom
            ? { forkedFrom: sourceRunId ? { runId: sourceRunId } : { threadId: t.forkedFrom } }
            : this.d.parentRunId
              ? { parentRunId: this.d.parentRunId, ...(this.d.parentLeaseId ? { parentLeaseId: this.d.parentLeaseId } : {}) }
              : {}),
          native: { sessionId: t.threadId, threadId: t.threadId, ...(turnId ? { turnId } : {}) },
        });
      } catch (err) {
        // Forked from a killed thread: this thread is stopped too.
        if (t.forkedFrom && /forkedFrom/.test((err as Error).message)) this.killed(t);
        throw err;
      }
      t.runId = r.runId;
      this.d.log(`thread ${t.threadId} → run ${r.runId}`);
      void this.watch(t, r.runId);
      return { runId: r.runId, leaseId: r.leaseId, epoch: r.epoch };
    })().catch((err) => {
      t.binding = null;
      throw err;
    });
    return t.binding;
  }

  private turnsRecorded = new Set<string>();
  private async recordTurn(t: ThreadState, turnId: string): Promise<void> {
    if (this.turnsRecorded.has(turnId)) return;
    this.turnsRecorded.add(turnId);
    try {
      const b = await t.binding;
      if (!b) return;
      const run = await this.d.client.getRun(b.runId);
      await this.d.client.createRun({
        taskId: this.d.taskId ?? `codex:${t.threadId}`,
        harness: "codex",
        ...(run.parentRunId ? { parentRunId: run.parentRunId } : {}),
        native: { sessionId: t.threadId, threadId: t.threadId, turnId },
      });
    } catch (err) {
      this.d.log(`could not record turn ${turnId} of thread ${t.threadId}: ${describeError(err)}`);
    }
  }

  /** thread/fork answered: `threadId` continues `sourceThreadId`. */
  forked(threadId: string, sourceThreadId: string): void {
    const t = this.get(threadId);
    t.forkedFrom = sourceThreadId;
    if (this.get(sourceThreadId).killed) this.killed(t);
  }

  /** True once any thread of this session was found killed. */
  anyKilled(): boolean {
    for (const t of this.threads.values()) if (t.killed) return true;
    return false;
  }

  /** The thread that owns an active turn (for a turn/completed that carries only `turn`). */
  threadOfTurn(turnId: string): string | undefined {
    for (const t of this.threads.values()) if (t.activeTurns.has(turnId) || t.interrupts.has(turnId)) return t.threadId;
    return undefined;
  }

  turnStarted(threadId: string, turnId: string): void {
    const t = this.get(threadId);
    if (t.activeTurns.has(turnId)) return;
    const known = t.binding !== null;
    t.activeTurns.add(turnId);
    this.ensureRun(t, turnId).catch((err) => this.d.log(`cannot register thread ${threadId}: ${describeError(err)}`));
    // Every later turn is announced too (idempotent re-registration records the run's newest turn id).
    if (known && !t.killed) void this.recordTurn(t, turnId);
    if (t.killed) this.interruptAll(t); // a turn that starts on a killed run is interrupted at once
  }

  /** turn/completed: acknowledges a pending interrupt only when the status says "interrupted". */
  async turnCompleted(threadId: string, turnId: string, status: string | undefined): Promise<void> {
    const t = this.get(threadId);
    t.activeTurns.delete(turnId);
    const requestedAt = t.interrupts.get(turnId);
    if (requestedAt === undefined) return;
    t.interrupts.delete(turnId);
    if (status !== "interrupted") {
      this.d.log(`turn ${turnId} ended "${status}" after the interrupt; not recorded as an acknowledgment`);
      return;
    }
    if (!t.runId) return;
    try {
      await this.d.client.request("POST", `/api/v1/runs/${encodeURIComponent(t.runId)}/observed`, {
        meaning: "turn_interrupted",
        evidence: {
          harness: "codex",
          method: "turn/completed",
          threadId,
          turnId,
          status,
          interruptRequestedAt: requestedAt,
          completedAt: new Date().toISOString(),
        },
      });
      this.d.log(`turn ${turnId} interrupted: reported "observed by target" for run ${t.runId}`);
    } catch (err) {
      this.d.log(`could not report the interrupt of ${turnId}: ${describeError(err)}`);
    }
  }

  /** Marks the thread killed and interrupts its active turns (once each). */
  killed(t: ThreadState): void {
    if (!t.killed) {
      t.killed = true;
      this.d.log(`run ${t.runId ?? "?"} of thread ${t.threadId} is killed: interrupting ${t.activeTurns.size} turn(s)`);
      this.d.onKilled(t);
    }
    this.interruptAll(t);
  }

  private interruptAll(t: ThreadState): void {
    for (const turnId of t.activeTurns) {
      if (t.interrupts.has(turnId)) continue;
      t.interrupts.set(turnId, new Date().toISOString());
      this.d.interrupt(t.threadId, turnId);
    }
  }

  private async watch(t: ThreadState, runId: string): Promise<void> {
    try {
      await subscribe(
        { url: this.d.cfg.url, apiKey: this.d.cfg.apiKey },
        runId,
        () => {
          this.doorbell.ring();
          void this.check(t);
        },
        this.stop.signal,
        { onDisconnect: (e) => this.d.log(`event stream: ${e.message}; reconnecting`) },
      );
      void this.check(t); // anything that happened before the stream was ready
    } catch (err) {
      if (!this.stop.signal.aborted) this.d.log(`event stream unavailable (${describeError(err)}); relying on periodic checks`);
    }
  }

  /** Reads the durable state: an event is only a wake-up call. */
  async check(t: ThreadState): Promise<void> {
    if (!t.runId || t.killed) return;
    try {
      const run = await this.d.client.getRun(t.runId);
      if (run.lifecycle === "killed") this.killed(t);
    } catch (err) {
      this.d.log(`cannot read run ${t.runId}: ${describeError(err)}`);
    }
  }

  close(): void {
    this.stop.abort();
    clearInterval(this.tick);
  }

  /**
   * The app-server is gone, so every thread it served has ended: their runs show as finished
   * (docs/fleet-stop.md#run-completion). Best effort, bounded by the client's timeout.
   */
  async finishAll(): Promise<void> {
    const runIds = [...this.threads.values()].flatMap((t) => (t.runId && !t.killed ? [t.runId] : []));
    await Promise.all(
      runIds.map((runId) =>
        // The app-server is gone: anything of the thread still in progress is abandoned (unknown, for a person).
        this.d.client
          .finish(runId, { abandon: true })
          .catch((err: unknown) => this.d.log(`cannot mark run ${runId} finished: ${describeError(err)}`)),
      ),
    );
  }
}
