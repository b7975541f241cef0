// Reporting outcomes to the control plane, and keeping the executor's own receipt (docs/ideas.md#five-questions) when the
// report cannot be delivered. Every outcome is a claim the guard can prove: an aborted handler is
// `aborted_unknown`, a lost report is `uncertain` until a retry reconciles it from the receipt.
import type { CompleteBody } from "../../../schemas/operations";
import { QuiesceApiError, QuiesceUnreachableError } from "../errors";
import type { ExecutorJournal, JournalEntry } from "./journal";
import type { JobStamp } from "./stamp";
import type { GuardClient, GuardOutcome } from "./types";
import type { GuardCounters } from "./counters";
import { Limiter } from "./limiter";

const KILL_REASONS = new Set(["killed", "parent_revoked", "lease_revoked"]);

export class Reporter {
  /** After a kill every aborted handler reports at once; two at a time keeps those reports from
   *  crowding out the re-checks that abort the handlers still running. */
  private readonly reports = new Limiter(2);
  /** "Observed by target" is one fact per run and stop, not one per operation. */
  private readonly observed = new Set<string>();

  constructor(
    private readonly client: GuardClient,
    private readonly journal: ExecutorJournal | undefined,
    private readonly counts: GuardCounters,
  ) {}

  async report<R>(stamp: JobStamp, body: CompleteBody, result: R | Error): Promise<GuardOutcome<R>> {
    const op = stamp.operationId;
    const eff = body.effect;
    try {
      const res = await this.client.complete(op, { ...body, leaseId: stamp.leaseId });
      if (eff) await this.journal?.put(entry(op, "reported", { effect: eff }));
      if (body.outcome === "failed") {
        this.counts.add("failed");
        return { status: "failed", error: result as Error };
      }
      this.counts.add("completed");
      return { status: "completed", result: result as R, effectReceiptId: res.effectReceiptId };
    } catch (err) {
      if (err instanceof QuiesceApiError && err.status === 409) {
        // The run was killed while the handler ran; the report is kept as evidence by the barrier.
        if (eff) await this.journal?.put(entry(op, "reported", { effect: eff }));
        if (body.outcome === "failed") {
          this.counts.add("failed");
          return { status: "failed", error: result as Error };
        }
        this.counts.add("completed_after_kill");
        return { status: "completed_after_kill", result: result as R };
      }
      if (err instanceof QuiesceUnreachableError || (err instanceof QuiesceApiError && err.status >= 500)) {
        // Transport lost after the work was done: the outcome is uncertain to the control plane.
        // Recorded here; a retry with the same operationId reconciles it from this receipt.
        const since = new Date().toISOString();
        await this.journal?.put(entry(op, "uncertain", { effect: eff, report: body, uncertain: { cause: "transport_lost", since } }));
        this.counts.add("uncertain");
        return { status: "uncertain", cause: "transport_lost", effect: eff };
      }
      throw err;
    }
  }

  /** Send the report the control plane never acknowledged, from the executor's own receipt. */
  async reconcile<R>(stamp: JobStamp, prior: JournalEntry): Promise<GuardOutcome<R>> {
    const original = prior.report ?? { outcome: "succeeded" as const, effect: prior.effect };
    const detail = {
      reconciledFrom: "executor_receipt",
      uncertainSince: prior.uncertain?.since ?? null,
      original: original.detail ?? null,
    };
    const out = await this.report<R>(stamp, { ...original, detail }, undefined as R);
    if (out.status === "completed" || out.status === "completed_after_kill" || out.status === "failed") {
      this.counts.add("already_applied");
      return { status: "already_applied", reconciled: true };
    }
    return out;
  }

  async aborted<R>(stamp: JobStamp, reason: string, error: Error): Promise<GuardOutcome<R>> {
    this.counts.add("aborted_unknown");
    const op = stamp.operationId;
    // "It was stopped" and "it did not happen" are different claims (docs/ideas.md#control-state): the report says the
    // outcome is unknown. Under a kill the API keeps it as barrier evidence (409) and the barrier
    // settles the operation against its provider.
    await this.reports
      .run(() =>
        this.client.complete(op, {
          outcome: "aborted_unknown",
          detail: { abortedBy: reason, error: error.message },
          leaseId: stamp.leaseId,
        }),
      )
      .catch(() => {});
    const key = `${stamp.runId}|${stamp.epoch}`;
    if (KILL_REASONS.has(reason) && this.client.reportObserved && !this.observed.has(key)) {
      this.observed.add(key);
      // The stop ladder's "observed by target": this worker saw the signal and its handler returned.
      await this.reports
        .run(() =>
          this.client.reportObserved!(stamp.runId, {
            meaning: "signal_accepted",
            leaseId: stamp.leaseId,
            evidence: { operationId: op, abortedBy: reason, handlerReturnedAt: new Date().toISOString(), source: "worker-guard" },
          }),
        )
        .catch(() => {});
    }
    return { status: "aborted_unknown", reason, error };
  }
}

/** The control plane answered "no" (revoked key, operation or run gone): no authority to continue. */
export function refusal(err: unknown): { continue: false; reason: string } | null {
  if (!(err instanceof QuiesceApiError)) return null;
  if (err.status === 401) return { continue: false, reason: "unauthenticated" };
  if (err.status === 403) return { continue: false, reason: "forbidden" };
  if (err.status === 404) return { continue: false, reason: "missing_state" };
  return null;
}

export function entry(operationId: string, state: JournalEntry["state"], extra: Partial<JournalEntry> = {}): JournalEntry {
  return { operationId, state, ...extra, updatedAt: new Date().toISOString() };
}
