// The worker guard (DESIGN.md §9, seed 004 "the worker checks before it runs"): every dequeued job
// is admitted through the gate at dequeue time, against CURRENT authority; a denied job is
// acknowledged without running and counted by reason; a held job waits for the next control change
// and asks again (a fresh decision, never the pre-pause snapshot); a running job gets an AbortSignal
// fed by the control plane (kill, epoch change, lease revocation — and pause only with
// abortOnPause), heartbeats, and its effect reported through /complete.
//
// Outcomes are stated as what can be proven: a handler interrupted by an abort is `aborted_unknown`
// ("it may have run"), never "did not execute"; a report lost in transport is `uncertain` until a
// retry of the same operationId reconciles it from the executor's own receipt (seed 000).
import type { CompleteBody, CompleteResponse, HeartbeatResponse } from "../../schemas/operations";
import type { GateResponse } from "../../schemas/gate";
import { AbortTokens, type ControlFeed, type Recheck } from "../../abort/tokens";
import { QuiesceApiError, QuiesceUnreachableError } from "../errors";
import type { ExecutorJournal, JournalEffect, JournalEntry } from "./journal";
import { JobStampSchema, type JobStamp } from "./stamp";
import { counterFor, GuardCounters } from "./counters";

/** What the guard needs from the SDK client (QuiesceClient satisfies it). */
export interface GuardClient {
  admit(operationId: string): Promise<GateResponse>;
  heartbeat(operationId: string): Promise<HeartbeatResponse>;
  complete(operationId: string, body: CompleteBody): Promise<CompleteResponse>;
  /** Optional: "observed by target" for the stop ladder (worker keys may not be allowed; ignored). */
  reportObserved?(runId: string, body: { meaning: "signal_accepted" | "turn_interrupted" | "process_terminated"; evidence?: Record<string, unknown> }): Promise<unknown>;
}

export interface WorkerGuardOptions {
  client: GuardClient;
  /** Wake-ups: sseFeed(connection) for remote workers, listenFeed(...) in-process. */
  feed: ControlFeed;
  /** How a wake-up is verified; default the HTTP heartbeat (gateRecheck(key) in-process). */
  recheck?: Recheck;
  /** Abort running handlers when their run is paused (default false: pause holds the NEXT call). */
  abortOnPause?: boolean;
  heartbeatIntervalMs?: number;
  /** Consecutive failed heartbeats before a running handler is aborted (fail closed). */
  heartbeatFailuresBeforeAbort?: number;
  /** A held job re-asks at least this often even without a wake-up (a lost notification). */
  holdRecheckMs?: number;
  /** Give a held job back to its queue after this long (the queue redelivers it later). */
  holdMaxMs?: number;
  journal?: ExecutorJournal;
  log?: (msg: string) => void;
}

export interface JobContext {
  signal: AbortSignal;
  stamp: JobStamp;
  /** Record a side effect the moment it lands (write-ahead); it is reported with the completion. */
  recordEffect(effect: JournalEffect): Promise<void>;
}

export type GuardOutcome<R> =
  | { status: "completed"; result: R; effectReceiptId: string | null }
  /** The handler finished after its run was killed: the report was kept as barrier evidence. */
  | { status: "completed_after_kill"; result: R }
  | { status: "failed"; error: Error }
  | { status: "discarded"; reason: string; counter: string }
  | { status: "already_applied"; reconciled: boolean; operation?: GateResponse["operation"] }
  | { status: "aborted_unknown"; reason: string; error?: Error }
  | { status: "uncertain"; cause: string; effect?: JournalEffect };

/** The control plane could not be asked: the job was NOT run and must go back to its queue. */
export class ControlUnavailableError extends Error {
  constructor(message: string, readonly cause?: unknown) {
    super(message);
    this.name = "ControlUnavailableError";
  }
}

/** The job stayed held longer than holdMaxMs (or the worker is stopping): give it back to the queue. */
export class StillHeldError extends Error {
  constructor(readonly operationId: string) {
    super(`operation ${operationId} is held (run paused); returned to the queue`);
    this.name = "StillHeldError";
  }
}

const KILL_REASONS = new Set(["killed", "parent_revoked", "lease_revoked"]);


export class WorkerGuard {
  readonly counts = new GuardCounters();
  private readonly tokens: AbortTokens;

  constructor(private readonly opts: WorkerGuardOptions) {
    const recheck: Recheck = opts.recheck ?? (async (op) => {
      const r = await opts.client.heartbeat(op);
      return { continue: r.continue, reason: r.reason };
    });
    this.tokens = new AbortTokens({ feed: opts.feed, recheck, abortOnPause: opts.abortOnPause, log: opts.log });
  }

  /** Running tokens (tests, bench). */
  get running(): number { return this.tokens.size; }

  async run<R>(rawStamp: JobStamp, handler: (ctx: JobContext) => Promise<R>, runOpts: { signal?: AbortSignal } = {}): Promise<GuardOutcome<R>> {
    const parsed = JobStampSchema.safeParse(rawStamp);
    if (!parsed.success) return this.discard("missing_state");
    const stamp = parsed.data;
    const op = stamp.operationId;

    // Watch the run BEFORE asking, so a change committed between the answer and the abort token
    // being armed is not missed (it sets `woke`, and the token re-checks at once).
    let woke = false;
    let wakeHold: (() => void) | null = null;
    let unwatch: () => void;
    try {
      unwatch = await this.opts.feed.watch(stamp.runId, () => { woke = true; wakeHold?.(); });
    } catch (err) {
      throw new ControlUnavailableError(`cannot watch run ${stamp.runId}: ${(err as Error).message}`, err);
    }
    try {
      // 1. Admit (hold → wait for a change and ask again).
      const heldSince = Date.now();
      let countedHold = false;
      for (;;) {
        woke = false;
        const d = await this.admit(op);
        if (d.decision === "allow") break;
        if (d.decision === "deny") {
          if (d.reason === "already_applied") {
            this.counts.add("already_applied");
            const prior = await this.opts.journal?.get(op);
            if (prior && prior.state !== "reported") await this.opts.journal?.put({ ...prior, state: "reported", updatedAt: new Date().toISOString() });
            return { status: "already_applied", reconciled: false, operation: d.operation };
          }
          return this.discard(d.reason);
        }
        if (!countedHold) { this.counts.add("held"); countedHold = true; }
        const maxMs = this.opts.holdMaxMs ?? 10 * 60_000;
        const left = heldSince + maxMs - Date.now();
        if (left <= 0 || runOpts.signal?.aborted) throw new StillHeldError(op);
        if (!woke) {
          await new Promise<void>((resolve) => {
            const t = setTimeout(done, Math.min(this.opts.holdRecheckMs ?? 30_000, left));
            const onStop = () => done();
            runOpts.signal?.addEventListener("abort", onStop, { once: true });
            wakeHold = done;
            function done() { clearTimeout(t); runOpts.signal?.removeEventListener("abort", onStop); resolve(); }
          });
          wakeHold = null;
        }
      }

      // 2. Allowed. If this operationId already produced an effect (a retry after transport loss),
      //    report that effect instead of performing it again.
      const prior = await this.opts.journal?.get(op);
      if (prior && prior.state !== "reported" && (prior.report || prior.effect)) return await this.reconcile(stamp, prior);
      if (prior && prior.state !== "reported") {
        // A previous attempt started and left no receipt: its outcome is unknown. Running it again
        // could repeat the effect, so the guard says so instead of guessing.
        this.counts.add("uncertain");
        await this.opts.client.complete(op, { outcome: "aborted_unknown", detail: { cause: "interrupted_attempt", startedAt: prior.updatedAt } }).catch(() => {});
        return { status: "uncertain", cause: "interrupted_attempt" };
      }

      // 3. Run under an abort token.
      const token = await this.tokens.open(stamp).catch((err: Error) => {
        throw new ControlUnavailableError(`cannot arm the abort token: ${err.message}`, err);
      });
      if (woke) void token.check();
      const signal = runOpts.signal ? AbortSignal.any([token.signal, runOpts.signal]) : token.signal;
      const hb = this.startHeartbeats(op, token.apply);
      let effect: JournalEffect | undefined;
      await this.opts.journal?.put(entry(op, "started"));
      try {
        const result = await handler({
          signal, stamp,
          recordEffect: async (e) => { effect = e; await this.opts.journal?.put(entry(op, "effect_recorded", { effect: e })); },
        });
        return await this.report(stamp, { outcome: "succeeded", effect }, result);
      } catch (err) {
        const abortedBy = token.abortReason()?.reason ?? (runOpts.signal?.aborted ? "worker_stopping" : undefined);
        if (effect) return await this.report(stamp, { outcome: "succeeded", effect }, undefined as R);
        if (abortedBy) return await this.aborted<R>(stamp, abortedBy, err as Error);
        return await this.report<R>(stamp, { outcome: "failed", detail: { error: (err as Error).message } }, err as Error);
      } finally {
        clearInterval(hb);
        token.close();
      }
    } finally {
      unwatch();
    }
  }

  private async admit(op: string): Promise<GateResponse> {
    try {
      return await this.opts.client.admit(op);
    } catch (err) {
      // An operation the control plane does not know has no authority: deny (fail closed).
      if (err instanceof QuiesceApiError && err.status === 404) return { decision: "deny", reason: "missing_state", currentEpoch: null };
      throw new ControlUnavailableError(`admit ${op}: ${(err as Error).message}`, err);
    }
  }

  private discard(reason: string): GuardOutcome<never> {
    const counter = counterFor(reason);
    this.counts.add(counter);
    return { status: "discarded", reason, counter };
  }

  private startHeartbeats(op: string, apply: (a: { continue: boolean; reason: string }) => void): NodeJS.Timeout {
    let failures = 0;
    const limit = this.opts.heartbeatFailuresBeforeAbort ?? 3;
    const t = setInterval(() => {
      this.opts.client.heartbeat(op).then(
        (r) => { failures = 0; apply({ continue: r.continue, reason: r.reason }); },
        (err: Error) => {
          this.opts.log?.(`[worker] heartbeat ${op} failed: ${err.message}`);
          if (++failures >= limit) apply({ continue: false, reason: "control_unreachable" });
        },
      );
    }, this.opts.heartbeatIntervalMs ?? 15_000);
    t.unref();
    return t;
  }

  private async report<R>(stamp: JobStamp, body: CompleteBody, result: R | Error): Promise<GuardOutcome<R>> {
    const op = stamp.operationId;
    const eff = body.effect;
    try {
      const res = await this.opts.client.complete(op, body);
      if (eff) await this.opts.journal?.put(entry(op, "reported", { effect: eff }));
      if (body.outcome === "failed") { this.counts.add("failed"); return { status: "failed", error: result as Error }; }
      this.counts.add("completed");
      return { status: "completed", result: result as R, effectReceiptId: res.effectReceiptId };
    } catch (err) {
      if (err instanceof QuiesceApiError && err.status === 409) {
        // The run was killed while the handler ran; the report is kept as evidence by the barrier.
        if (eff) await this.opts.journal?.put(entry(op, "reported", { effect: eff }));
        if (body.outcome === "failed") { this.counts.add("failed"); return { status: "failed", error: result as Error }; }
        this.counts.add("completed_after_kill");
        return { status: "completed_after_kill", result: result as R };
      }
      if (err instanceof QuiesceUnreachableError || (err instanceof QuiesceApiError && err.status >= 500)) {
        // Transport lost after the work was done: the outcome is uncertain to the control plane.
        // Recorded here; a retry with the same operationId reconciles it from this receipt.
        const since = new Date().toISOString();
        await this.opts.journal?.put(entry(op, "uncertain", { effect: eff, report: body, uncertain: { cause: "transport_lost", since } }));
        this.counts.add("uncertain");
        return { status: "uncertain", cause: "transport_lost", effect: eff };
      }
      throw err;
    }
  }

  /** Send the report the control plane never acknowledged, from the executor's own receipt. */
  private async reconcile<R>(stamp: JobStamp, prior: JournalEntry): Promise<GuardOutcome<R>> {
    const original = prior.report ?? { outcome: "succeeded" as const, effect: prior.effect };
    const detail = { reconciledFrom: "executor_receipt", uncertainSince: prior.uncertain?.since ?? null, original: original.detail ?? null };
    const out = await this.report<R>(stamp, { ...original, detail }, undefined as R);
    if (out.status === "completed" || out.status === "completed_after_kill" || out.status === "failed") {
      this.counts.add("already_applied");
      return { status: "already_applied", reconciled: true };
    }
    return out;
  }

  private async aborted<R>(stamp: JobStamp, reason: string, error: Error): Promise<GuardOutcome<R>> {
    this.counts.add("aborted_unknown");
    const op = stamp.operationId;
    // "It was stopped" and "it did not happen" are different claims (seed 004): the report says the
    // outcome is unknown. Under a kill the API keeps it as barrier evidence (409) and the barrier
    // settles the operation against its provider.
    await this.opts.client.complete(op, { outcome: "aborted_unknown", detail: { abortedBy: reason, error: error.message } }).catch(() => {});
    if (KILL_REASONS.has(reason) && this.opts.client.reportObserved) {
      // The stop ladder's "observed by target": this worker saw the signal and its handler returned.
      await this.opts.client.reportObserved(stamp.runId, {
        meaning: "signal_accepted",
        evidence: { operationId: op, abortedBy: reason, handlerReturnedAt: new Date().toISOString(), source: "worker-guard" },
      }).catch(() => {});
    }
    return { status: "aborted_unknown", reason, error };
  }
}

function entry(operationId: string, state: JournalEntry["state"], extra: Partial<JournalEntry> = {}): JournalEntry {
  return { operationId, state, ...extra, updatedAt: new Date().toISOString() };
}
