// Abort tokens: one AbortSignal per running operation, fired when the control plane says the
// operation must stop (docs/architecture.md#integrations-fail-closed, docs/ideas.md#control-state "abort tokens for long calls").
//
// A wake-up comes from a feed (PostgreSQL LISTEN in-process, server-sent events remotely); it is
// never trusted by itself. The token re-checks authority through the heartbeat (the gate's third
// entry point) and aborts only on its answer. One exception, because a kill is terminal: a kill
// notification that names the token's run aborts it at once, without the round trip
// (control-event.ts killNames; fail closed — it can only stop work). Tokens of the same run, lease and epoch share one
// re-check per wake-up: authority is a property of the run, so 100 handlers of one killed run cost
// one round trip, not 100. Operation-level answers (operation_expired, already_applied) abort only
// the operation asked about and the rest of the group is asked again.
//
// Pause: the heartbeat answers continue=true for a paused run (pause holds the NEXT call), so a
// running handler keeps going unless the token was opened with abortOnPause.
import type { WakeEvent } from "./control-event";
import { killNames, mayChangeAuthority } from "./control-event";
import { joinShared } from "./join";
import { backoffDelay, sleep } from "../../platform/wait";

export interface RecheckAnswer {
  continue: boolean;
  reason: string;
}
/** Asks the control plane about one running operation (heartbeat semantics). Throws when unreachable. */
/** `target` carries the operation's lease: the capability a worker that is not its holder presents. */
export type Recheck = (operationId: string, target: TokenTarget) => Promise<RecheckAnswer>;

/** Delivers wake-ups for a run's tree; resolves once live (nothing committed after can be missed). */
export interface ControlFeed {
  watch(runId: string, onWake: (e: WakeEvent) => void): Promise<() => void>;
}

export interface TokenTarget {
  runId: string;
  leaseId: string;
  epoch: number;
  operationId: string;
  expiresAt?: string | Date | null;
}

export interface AbortReason {
  /** The gate reason (killed, parent_revoked, lease_revoked, stale_epoch, paused, …) or control_unreachable. */
  reason: string;
  at: Date;
}

export interface AbortToken {
  readonly signal: AbortSignal;
  readonly operationId: string;
  abortReason(): AbortReason | undefined;
  /** Feed a heartbeat answer obtained elsewhere (the guard's periodic heartbeat). */
  apply(answer: RecheckAnswer): void;
  /** Re-check this operation now (e.g. a wake-up arrived before the token was open). */
  check(): Promise<void>;
  close(): void;
}

export interface AbortTokensOptions {
  feed: ControlFeed;
  recheck: Recheck;
  /** Abort running operations when their run is paused (default false: pause holds the next call). */
  abortOnPause?: boolean;
  /** Re-check attempts before an unreachable control plane aborts the group (fail closed). */
  unreachableAttempts?: number;
  log?: (msg: string) => void;
}

/** Reasons that describe the run's authority, so they apply to every operation of the group. */
const RUN_LEVEL = new Set([
  "missing_state",
  "killed",
  "parent_revoked",
  "lease_revoked",
  "lease_expired",
  "stale_epoch",
  "breaker_open",
  "paused",
  "unauthenticated",
  "forbidden",
]);

interface Entry {
  target: TokenTarget;
  controller: AbortController;
  reason?: AbortReason;
  expiryTimer?: NodeJS.Timeout;
}

class Group {
  readonly entries = new Set<Entry>();
  watching: Promise<void> | null = null;
  unwatch: (() => void) | null = null;
  private running = false;
  private dirty = false;
  constructor(
    private readonly owner: AbortTokens,
    readonly key: string,
  ) {}

  wake(): void {
    if (this.running) {
      this.dirty = true;
      return;
    }
    this.running = true;
    void this.loop().finally(() => {
      this.running = false;
    });
  }

  private async loop(): Promise<void> {
    do {
      this.dirty = false;
      const rep = [...this.entries].find((e) => !e.reason);
      if (!rep) return;
      const answer = await this.owner.askWithRetry(rep.target);
      if (!answer) {
        this.abortAll("control_unreachable");
        return;
      }
      this.applyAnswer(answer, rep);
    } while (this.dirty);
  }

  /** Re-check one operation (its own expiry came due). */
  async checkOne(entry: Entry): Promise<void> {
    if (entry.reason) return;
    const answer = await this.owner.askWithRetry(entry.target);
    if (!answer) this.abortAll("control_unreachable");
    else this.applyAnswer(answer, entry);
  }

  applyAnswer(answer: RecheckAnswer, asked: Entry): void {
    if (answer.continue) {
      if (answer.reason === "paused" && this.owner.abortOnPause) this.abortAll("paused");
      return;
    }
    if (RUN_LEVEL.has(answer.reason)) this.abortAll(answer.reason);
    else if (!asked.reason) {
      abortEntry(asked, answer.reason);
      // The others of the group may still be fine: ask again about one of them.
      if (this.running) this.dirty = true;
      else if ([...this.entries].some((e) => !e.reason)) this.wake();
    }
  }

  abortAll(reason: string): void {
    for (const e of this.entries) abortEntry(e, reason);
  }
}

function abortEntry(e: Entry, reason: string): void {
  if (e.reason) return;
  e.reason = { reason, at: new Date() };
  if (e.expiryTimer) clearTimeout(e.expiryTimer);
  e.controller.abort(new OperationAbortedError(reason));
}

export class OperationAbortedError extends Error {
  constructor(readonly reason: string) {
    super(`operation aborted by the control plane: ${reason}`);
    this.name = "AbortError";
  }
}

export class AbortTokens {
  private readonly groups = new Map<string, Group>();
  readonly abortOnPause: boolean;

  constructor(private readonly opts: AbortTokensOptions) {
    this.abortOnPause = opts.abortOnPause ?? false;
  }

  /** Opens a token; resolves once the feed is live for the operation's run. */
  async open(target: TokenTarget): Promise<AbortToken> {
    const key = `${target.runId}|${target.leaseId}|${target.epoch}`;
    let group = this.groups.get(key);
    if (!group) {
      const g = (group = new Group(this, key));
      this.groups.set(key, g);
      g.watching = this.opts.feed
        .watch(target.runId, (e) => {
          // A kill naming the run aborts at once (terminal; no re-check needed); anything else wakes a re-check.
          if (killNames(e, target.runId)) g.abortAll("killed");
          else if (mayChangeAuthority(e)) g.wake();
        })
        .then(
          (unwatch) => {
            if (this.groups.get(key) === g) g.unwatch = unwatch;
            else unwatch();
          },
          (err) => {
            if (this.groups.get(key) === g) this.groups.delete(key);
            throw err;
          },
        );
    }
    const entry: Entry = { target, controller: new AbortController() };
    await joinShared(group.entries, entry, group.watching);
    this.armExpiry(group, entry);
    const g = group;
    return {
      signal: entry.controller.signal,
      operationId: target.operationId,
      abortReason: () => entry.reason,
      apply: (answer) => g.applyAnswer(answer, entry),
      check: () => g.checkOne(entry),
      close: () => this.release(g, entry),
    };
  }

  /** Number of open tokens (for tests and the bench). */
  get size(): number {
    let n = 0;
    for (const g of this.groups.values()) n += g.entries.size;
    return n;
  }

  /** null when the control plane stayed unreachable for every attempt. */
  async askWithRetry(target: TokenTarget): Promise<RecheckAnswer | null> {
    const { operationId } = target;
    const attempts = this.opts.unreachableAttempts ?? 4;
    for (let i = 0; i < attempts; i++) {
      try {
        return await this.opts.recheck(operationId, target);
      } catch (err) {
        this.opts.log?.(`[abort] re-check of ${operationId} failed (${(err as Error).message}); attempt ${i + 1}/${attempts}`);
        if (i < attempts - 1) await sleep(backoffDelay(i, { baseMs: 200, capMs: 5000 }));
      }
    }
    return null;
  }

  private armExpiry(group: Group, entry: Entry): void {
    // An operation's own expiry is known in advance: one timer at that moment re-checks it (not polling).
    const at = entry.target.expiresAt ? new Date(entry.target.expiresAt).getTime() : NaN;
    if (!Number.isFinite(at)) return;
    const delay = Math.max(0, at - Date.now()) + 50;
    if (delay > 2 ** 31 - 1) return;
    entry.expiryTimer = setTimeout(() => void group.checkOne(entry), delay);
    entry.expiryTimer.unref();
  }

  private release(group: Group, entry: Entry): void {
    if (entry.expiryTimer) clearTimeout(entry.expiryTimer);
    group.entries.delete(entry);
    if (group.entries.size === 0 && this.groups.get(group.key) === group) {
      this.groups.delete(group.key);
      group.unwatch?.();
      group.unwatch = null;
    }
  }
}
