// The worker guard (docs/architecture.md#integrations-fail-closed, docs/ideas.md#control-state "the worker
// checks before it runs"): every dequeued job
// is admitted through the gate at dequeue time, against CURRENT authority; a denied job is
// acknowledged without running and counted by reason; a held job waits for the next control change
// and asks again (a fresh decision, never the pre-pause snapshot); a running job gets an AbortSignal
// fed by the control plane (kill, epoch change, lease revocation — and pause only with
// abortOnPause), heartbeats, and its effect reported through /complete.
//
// Outcomes are stated as what can be proven: a handler interrupted by an abort is `aborted_unknown`
// ("it may have run"), never "did not execute"; a report lost in transport is `uncertain` until a
// retry of the same operationId reconciles it from the executor's own receipt (docs/ideas.md#five-questions).
import { askGate } from "../hold";
import type { GateResponse } from "../../../schemas/gate";
import { AbortTokens, type Recheck } from "../../abort/tokens";
import { QuiesceApiError } from "../errors";
import type { JournalEffect } from "./journal";
import { JobStampSchema, type JobStamp } from "./stamp";
import { counterFor, GuardCounters } from "./counters";
import { Reporter, entry, refusal } from "./reporter";
import { ControlUnavailableError, StillHeldError, type GuardOutcome, type JobContext, type WorkerGuardOptions } from "./types";

export * from "./types";

export class WorkerGuard {
  readonly counts = new GuardCounters();
  private readonly tokens: AbortTokens;
  private readonly reporter: Reporter;

  constructor(private readonly opts: WorkerGuardOptions) {
    this.reporter = new Reporter(opts.client, opts.journal, this.counts);
    const recheck: Recheck =
      opts.recheck ??
      (async (op, target) => {
        try {
          const r = await opts.client.heartbeat(op, { leaseId: target.leaseId });
          return { continue: r.continue, reason: r.reason };
        } catch (err) {
          const refused = refusal(err);
          if (refused) return refused;
          throw err; // unreachable: retried, then fail closed
        }
      });
    this.tokens = new AbortTokens({ feed: opts.feed, recheck, abortOnPause: opts.abortOnPause, log: opts.log });
  }

  /** Running tokens (tests, bench). */
  get running(): number {
    return this.tokens.size;
  }

  async run<R>(
    rawStamp: JobStamp,
    handler: (ctx: JobContext) => Promise<R>,
    runOpts: { signal?: AbortSignal } = {},
  ): Promise<GuardOutcome<R>> {
    const parsed = JobStampSchema.safeParse(rawStamp);
    if (!parsed.success) return this.discard("missing_state");
    const stamp = parsed.data;
    const op = stamp.operationId;

    // Watch the run BEFORE asking, so a change committed between the answer and the abort token
    // being armed is not missed (it sets `woke`, and the token re-checks at once).
    let woke = false;
    // Rung by the feed: ends a hold's wait at once (askGate reads the signal before each ask).
    let bell = new AbortController();
    let unwatch: () => void;
    try {
      unwatch = await this.opts.feed.watch(stamp.runId, () => {
        woke = true;
        const old = bell;
        bell = new AbortController();
        old.abort();
      });
    } catch (err) {
      throw new ControlUnavailableError(`cannot watch run ${stamp.runId}: ${(err as Error).message}`, err);
    }
    try {
      // 1. Admit (hold → wait for a change, or the recheck interval, and ask again; the SDK's one hold loop).
      const held = await askGate(() => this.admit(op, stamp.leaseId), {
        signal: runOpts.signal,
        wake: () => bell.signal,
        maxHoldMs: this.opts.holdMaxMs ?? 10 * 60_000,
        backoff: () => this.opts.holdRecheckMs ?? 30_000,
        onHold: (_answer, attempt) => {
          if (attempt === 0) this.counts.add("held");
        },
      });
      if (held.kind !== "decided") throw new StillHeldError(op);
      const d = held.answer;
      if (d.decision === "deny") {
        if (d.reason === "already_applied") {
          this.counts.add("already_applied");
          const prior = await this.opts.journal?.get(op);
          if (prior && prior.state !== "reported")
            await this.opts.journal?.put({ ...prior, state: "reported", updatedAt: new Date().toISOString() });
          return { status: "already_applied", reconciled: false, operation: d.operation };
        }
        return this.discard(d.reason);
      }

      // 2. Allowed. If this operationId already produced an effect (a retry after transport loss),
      //    report that effect instead of performing it again.
      const prior = await this.opts.journal?.get(op);
      if (prior && prior.state !== "reported" && (prior.report || prior.effect)) return await this.reporter.reconcile(stamp, prior);
      if (prior && prior.state !== "reported") {
        // A previous attempt started and left no receipt: its outcome is unknown. Running it again
        // could repeat the effect, so the guard says so instead of guessing.
        this.counts.add("uncertain");
        await this.opts.client
          .complete(op, {
            outcome: "aborted_unknown",
            detail: { cause: "interrupted_attempt", startedAt: prior.updatedAt },
            leaseId: stamp.leaseId,
          })
          .catch(() => {});
        return { status: "uncertain", cause: "interrupted_attempt" };
      }

      // 3. Run under an abort token.
      const token = await this.tokens.open(stamp).catch((err: Error) => {
        throw new ControlUnavailableError(`cannot arm the abort token: ${err.message}`, err);
      });
      if (woke) void token.check();
      const signal = runOpts.signal ? AbortSignal.any([token.signal, runOpts.signal]) : token.signal;
      const hb = this.startHeartbeats(op, stamp.leaseId, token.apply);
      let effect: JournalEffect | undefined;
      await this.opts.journal?.put(entry(op, "started"));
      try {
        const result = await handler({
          signal,
          stamp,
          recordEffect: async (e) => {
            effect = e;
            await this.opts.journal?.put(entry(op, "effect_recorded", { effect: e }));
          },
        });
        return await this.reporter.report(stamp, { outcome: "succeeded", effect }, result);
      } catch (err) {
        const abortedBy = token.abortReason()?.reason ?? (runOpts.signal?.aborted ? "worker_stopping" : undefined);
        if (effect) return await this.reporter.report(stamp, { outcome: "succeeded", effect }, undefined as R);
        if (abortedBy) return await this.reporter.aborted<R>(stamp, abortedBy, err as Error);
        return await this.reporter.report<R>(stamp, { outcome: "failed", detail: { error: (err as Error).message } }, err as Error);
      } finally {
        clearInterval(hb);
        token.close();
      }
    } finally {
      unwatch();
    }
  }

  private async admit(op: string, leaseId: string): Promise<GateResponse> {
    try {
      return await this.opts.client.admit(op, { leaseId });
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

  private startHeartbeats(op: string, leaseId: string, apply: (a: { continue: boolean; reason: string }) => void): NodeJS.Timeout {
    let failures = 0;
    const limit = this.opts.heartbeatFailuresBeforeAbort ?? 3;
    const t = setInterval(() => {
      this.opts.client.heartbeat(op, { leaseId }).then(
        (r) => {
          failures = 0;
          apply({ continue: r.continue, reason: r.reason });
        },
        (err: Error) => {
          const refused = refusal(err);
          if (refused) return apply(refused);
          this.opts.log?.(`[worker] heartbeat ${op} failed: ${err.message}`);
          if (++failures >= limit) apply({ continue: false, reason: "control_unreachable" });
        },
      );
    }, this.opts.heartbeatIntervalMs ?? 15_000);
    t.unref();
    return t;
  }
}
