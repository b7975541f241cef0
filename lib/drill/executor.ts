// A worker that acts through the SDK worker guard (lib/agent/sdk/worker), talking to Quiesce only over
// HTTP: admission at dequeue, abort tokens fed by server-sent events, heartbeats, effect reports,
// executor-side receipts. `quiesce drill` runs it in-process; `npm run evals` runs the same code in
// separate worker processes (evals/support/pod-main.ts).
import { appendFile } from "node:fs/promises";
import { createHash } from "node:crypto";
import { QuiesceClient, QuiesceApiError } from "../agent/sdk/client";
import {
  WorkerGuard,
  fileJournal,
  sseFeed,
  type GuardClient,
  type GuardOutcome,
  type JobContext,
  type JobStamp,
} from "../agent/sdk/worker";
import type { ControlFeed } from "../agent/abort/tokens";
import type { GateBody } from "../schemas/gate";
import { lossyFetch, type LossyFetch } from "./lossy-fetch";
import type { AdmitAnswer, CallAnswer, ExecOutcome, Executor, JobBehaviour, RunHandle, RunOptions } from "./types";

/** A long call that is never cancelled still ends (a drill must not hang on a broken abort path). */
const LONG_CALL_CAP_MS = 120_000;

function deferred<T>() {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

/** The outcome of one delivery, without the handler's data. */
export function outcomeView(o: GuardOutcome<unknown>, handlerStarted: boolean): ExecOutcome {
  switch (o.status) {
    case "discarded":
      return { status: o.status, reason: o.reason, handlerStarted };
    case "aborted_unknown":
      return { status: o.status, reason: o.reason, handlerStarted };
    case "uncertain":
      return { status: o.status, cause: o.cause, handlerStarted };
    case "already_applied":
      return { status: o.status, reconciled: o.reconciled, recordedState: o.operation?.state, handlerStarted };
    case "failed":
      return { status: o.status, reason: o.error.message, handlerStarted };
    default:
      return { status: o.status, handlerStarted };
  }
}

/** What a job does once admitted. */
export async function perform(job: JobBehaviour, ctx: JobContext): Promise<string> {
  const op = ctx.stamp.operationId;
  switch (job.kind) {
    case "quick":
      await ctx.recordEffect({ providerOperationId: job.effectId ?? `effect-${op}`, detail: { by: "drill worker" } });
      return "done";
    case "fail":
      throw new Error("simulated failure of the first attempt");
    case "artifact": {
      const line = `approved artifact for ${op}\n`;
      await appendFile(job.file, line);
      await ctx.recordEffect({
        providerOperationId: `file:${job.file}#${op}`,
        detail: { sha256: createHash("sha256").update(line).digest("hex") },
      });
      return "handed off";
    }
    case "long":
      await new Promise<void>((resolve, reject) => {
        const t = setTimeout(resolve, LONG_CALL_CAP_MS);
        const stop = () => {
          clearTimeout(t);
          reject(ctx.signal.reason ?? new Error("aborted"));
        };
        if (ctx.signal.aborted) return stop();
        ctx.signal.addEventListener("abort", stop, { once: true });
      });
      return "long call finished";
  }
}

export interface LocalExecutorOptions {
  url: string;
  apiKey: string;
  label: string;
  timeoutMs?: number;
  log?: (line: string) => void;
}

export class LocalExecutor implements Executor {
  readonly label: string;
  readonly client: QuiesceClient;
  private readonly lossy: LossyFetch;
  private readonly feed: ControlFeed;
  private readonly guards = new Map<string, WorkerGuard>();
  private readonly admitWaiters = new Map<string, ((a: AdmitAnswer) => void)[]>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly stop = new AbortController();

  constructor(private readonly o: LocalExecutorOptions) {
    this.label = o.label;
    this.lossy = lossyFetch();
    this.client = new QuiesceClient({ url: o.url, apiKey: o.apiKey, timeoutMs: o.timeoutMs ?? 15_000, fetch: this.lossy.fetch });
    this.feed = sseFeed(this.client);
  }

  /** The guard for a journal folder (one per folder: the executor-side receipts live there). */
  guard(journalDir?: string): WorkerGuard {
    const key = journalDir ?? "";
    let g = this.guards.get(key);
    if (!g) {
      const client = this.client;
      const notify = (op: string, a: AdmitAnswer) => {
        const ws = this.admitWaiters.get(op);
        if (ws?.length) ws.shift()!(a);
      };
      const guardClient: GuardClient = {
        admit: async (op, opts) => {
          try {
            const d = await client.admit(op, opts);
            notify(op, { decision: d.decision, reason: d.reason });
            return d;
          } catch (err) {
            if (err instanceof QuiesceApiError && err.status === 404) notify(op, { decision: "deny", reason: "missing_state" });
            throw err;
          }
        },
        heartbeat: (op, opts) => client.heartbeat(op, opts),
        complete: (op, body) => client.complete(op, body),
        reportObserved: (runId, body) => client.reportObserved(runId, body),
      };
      g = new WorkerGuard({
        client: guardClient,
        feed: this.feed,
        journal: journalDir ? fileJournal(journalDir) : undefined,
        heartbeatIntervalMs: 2_000,
        holdRecheckMs: 2_000,
        holdMaxMs: 10 * 60_000,
        log: this.o.log,
      });
      this.guards.set(key, g);
    }
    return g;
  }

  run(stamp: JobStamp, job: JobBehaviour, opts: RunOptions = {}): RunHandle {
    const first = deferred<AdmitAnswer>();
    const started = deferred<boolean>();
    const list = this.admitWaiters.get(stamp.operationId) ?? [];
    list.push(first.resolve);
    this.admitWaiters.set(stamp.operationId, list);
    if (opts.loseComplete) {
      const suffix = `/operations/${encodeURIComponent(stamp.operationId)}/complete`;
      this.lossy.loseNext((m, url) => m === "POST" && url.endsWith(suffix), opts.loseComplete);
    }
    let ran = false;
    const outcome = this.guard(opts.journalDir)
      .run(
        stamp,
        async (ctx) => {
          ran = true;
          started.resolve(true);
          return perform(job, ctx);
        },
        { signal: this.stop.signal },
      )
      .then(
        (o) => outcomeView(o as GuardOutcome<unknown>, ran),
        (err: Error): ExecOutcome => ({ status: "error", reason: `${err.name}: ${err.message}`, handlerStarted: ran }),
      )
      .then((o) => {
        started.resolve(false);
        first.resolve({ decision: "none", reason: o.reason ?? o.status });
        const ws = this.admitWaiters.get(stamp.operationId);
        if (ws) {
          const i = ws.indexOf(first.resolve);
          if (i >= 0) ws.splice(i, 1);
        }
        return o;
      });
    return { operationId: stamp.operationId, firstAdmit: first.promise, started: started.promise, outcome };
  }

  async call(body: GateBody, external?: { simUrl: string }): Promise<CallAnswer> {
    let d;
    try {
      d = await this.client.gate(body);
    } catch (err) {
      // Fail closed: no answer is a deny, and nothing is sent.
      return {
        decision: "deny",
        reason: "control_unreachable",
        currentEpoch: null,
        externalCallSent: false,
        error: (err as Error).message,
      };
    }
    let externalCallSent = false;
    if (d.decision === "allow" && external) {
      const res = await fetch(`${external.simUrl}/jobs`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ operationId: body.operationId, runId: body.runId, mode: "cancel_cleanly" }),
        signal: AbortSignal.timeout(10_000),
      });
      externalCallSent = res.ok;
    }
    return { decision: d.decision, reason: d.reason, currentEpoch: d.currentEpoch, externalCallSent };
  }

  async scheduleRetry(stamp: JobStamp, tool: string, delayMs: number, job: JobBehaviour): Promise<RunHandle> {
    const attempt = (stamp.attempt ?? 0) + 1;
    const base = stamp.retryOf ?? stamp.operationId;
    const retry: JobStamp = { ...stamp, operationId: `${base}.r${attempt}`, attempt, retryOf: base };
    // Registered under the ORIGINAL lease and epoch (a retry is queued authority in another form).
    await this.client.registerOperation({
      runId: stamp.runId,
      leaseId: stamp.leaseId,
      epoch: stamp.epoch,
      operationId: retry.operationId,
      kind: "retry",
      tool,
      notBefore: new Date(Date.now() + delayMs).toISOString(),
    });
    const first = deferred<AdmitAnswer>();
    const started = deferred<boolean>();
    const outcome = deferred<ExecOutcome>();
    // A timer the barrier cannot reach: it lives in this process's memory, like a workflow continuation.
    const t = setTimeout(() => {
      this.timers.delete(t);
      const h = this.run(retry, job);
      h.firstAdmit.then(first.resolve);
      h.started.then(started.resolve);
      h.outcome.then(outcome.resolve);
    }, delayMs);
    this.timers.add(t);
    return { operationId: retry.operationId, firstAdmit: first.promise, started: started.promise, outcome: outcome.promise };
  }

  async close(): Promise<void> {
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    this.stop.abort();
  }
}
