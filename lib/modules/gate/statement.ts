// The gate's hot path (docs/architecture.md#the-gate): ONE round trip per decision. Everything — key authentication by
// hash, the shared tree lock, the ancestry read, the decision, the operation's transition, the
// gate_decisions row and, when the gate admits a breaker's probe, that transition's audit row — happens
// inside the SQL function quiesce_gate (lib/modules/gate/sql/quiesce_gate.sql). This module only validates input, calls
// it through a named prepared statement and maps its JSON answer. Concurrent `gate` calls on the default pool
// are decided in batches (quiesce_gate_batch, GateBatcher below, docs/gate.md#batches). The pure oracle is lib/control/gate.ts.
import "server-only";
import type pg from "pg";
import { gatePool } from "../../platform/db/pool";
import { newId } from "../../platform/ids";
import { setting } from "../../platform/config";
import { QuiesceError, badRequest } from "../../platform/errors";
import { BREAKER_DEFAULTS } from "../../control/breaker";
import { canonicalJson, sha256Hex } from "../../control/canonical";
import type { Decision, GateReason, OperationState } from "../../control/types";
import { recordGateDecision } from "../../platform/telemetry/metrics";
import { gateSpan } from "../../platform/telemetry/tracing";
import { FairQueue, teamOfKeyHash } from "./fair-share";

export interface EffectReceiptView {
  effectReceiptId: string;
  providerOperationId: string | null;
  detail: unknown;
  committedAt: string;
  rollbackOwner: string | null;
}

export interface RecordedOperation {
  operationId: string;
  state: OperationState;
  /** Only on `already_applied`: what the executor reported. */
  outcomeDetail?: unknown;
  /** Only on `already_applied`, when an effect receipt exists. */
  effectReceipt?: EffectReceiptView;
}

export type GateOutcome =
  | {
      ok: true;
      decision: Decision;
      reason: GateReason;
      currentEpoch: number | null;
      operation?: RecordedOperation;
      /** On awaiting_approval / approval_denied / approval_expired: the approval this call is bound to. */
      approvalId?: string;
      /** On budget_exhausted: the budget the call would have crossed. */
      budget?: string;
    }
  | { ok: false; code: "unauthenticated" | "forbidden"; message: string };

export type AdmitOutcome = GateOutcome | { ok: false; code: "not_found"; message: string };

export type HeartbeatOutcome =
  | { ok: true; continue: boolean; reason: GateReason; currentEpoch: number | null }
  | { ok: false; code: "unauthenticated" | "forbidden" | "not_found"; message: string };

export interface GateInput {
  keyHash: string;
  runId: string;
  leaseId: string;
  epoch: number;
  operationId: string;
  tool: string;
  /** The call's arguments: an approval binds to their digest and shows them (redacted) to the approver. */
  arguments?: unknown;
  /** The call's cost estimate by unit, reserved against the policy's budgets. */
  cost?: Record<string, number>;
}
export interface OperationInput {
  keyHash: string;
  operationId: string;
  /** The lease a caller that is not the work's registering key presents (docs/security/authorization.md#holders). */
  leaseId?: string | null;
}

/** The statement, exported so the bench can run exactly what the API runs. */
export const GATE_STATEMENT = "SELECT quiesce_gate($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13) AS r";
export const GATE_STATEMENT_NAME = "quiesce_gate_v2";

type Queryable = Pick<pg.Pool, "query"> | Pick<pg.ClientBase, "query">;

export type RawAnswer = {
  ok: boolean;
  code?: string;
  message?: string;
  decision?: Decision;
  reason?: GateReason;
  currentEpoch?: number | null;
  continue?: boolean;
  approvalId?: string | null;
  budget?: string | null;
  operation?: { operationId: string; state: OperationState; outcomeDetail?: unknown; effectReceipt?: Record<string, unknown> } | null;
};

const MAX_ID = 200;

function checkId(field: string, v: unknown): string {
  if (typeof v !== "string" || v.trim().length === 0 || v.length > MAX_ID)
    throw badRequest(`${field}: must be a non-empty string of at most ${MAX_ID} characters`);
  return v;
}

function checkHash(v: unknown): string {
  // Not a QuiesceError: a malformed hash can only come from our own code, never from a caller.
  if (typeof v !== "string" || !/^[0-9a-f]{64}$/.test(v)) throw new Error("keyHash must be a sha256 hex digest");
  return v;
}

/**
 * Runs quiesce_gate once. `via` defaults to the shared pool; the bench passes a dedicated client.
 * The named statement is parsed once per connection and then only bound and executed — except
 * behind a transaction pooler (QUIESCE_DB_POOLER=transaction), where the next transaction may run
 * on a server connection that never saw the statement: there it is sent unnamed every time
 * (docs/deploy.md#pgbouncer).
 */
export async function callGateFunction(
  source: "gate" | "admit" | "heartbeat",
  args: {
    keyHash: string;
    runId?: string | null;
    leaseId?: string | null;
    epoch?: number | null;
    operationId: string;
    tool?: string | null;
    extra?: GateExtra | null;
  },
  via: Queryable = gatePool(),
): Promise<RawAnswer> {
  const res = await (via as pg.Pool).query<{ r: RawAnswer }>({
    ...(setting("QUIESCE_DB_POOLER") === "transaction" ? {} : { name: GATE_STATEMENT_NAME }),
    text: GATE_STATEMENT,
    values: [
      source,
      args.keyHash,
      args.runId ?? null,
      args.leaseId ?? null,
      args.epoch ?? null,
      args.operationId,
      args.tool ?? null,
      newId("op"),
      BREAKER_DEFAULTS.coolDownMs,
      BREAKER_DEFAULTS.probeTimeoutMs,
      args.extra?.digest ?? null,
      args.extra?.args === undefined ? null : JSON.stringify(args.extra.args),
      args.extra?.cost === undefined ? null : JSON.stringify(args.extra.cost),
    ],
  });
  const row = res.rows[0];
  if (!row) throw new Error("quiesce_gate returned no row");
  // The gate's own breaker transition (it admitted the half-open probe) was audited and announced inside
  // the same statement (lib/modules/gate/sql/quiesce_gate.sql): nothing is left to do here.
  return row.r;
}

/**
 * The batch statement (quiesce_gate_batch, lib/modules/gate/sql/quiesce_gate_batch.sql): arrays in, one answer per call out.
 * The answers come back as ONE json array (array_to_json), not as the function's jsonb[]: node-postgres
 * parses a jsonb[] character by character, unescaping every quote of every answer, which the API
 * process would pay on every batch (docs/design/gate-batches.md).
 */
export const GATE_BATCH_STATEMENT = "SELECT array_to_json(quiesce_gate_batch($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)) AS r";
export const GATE_BATCH_STATEMENT_NAME = "quiesce_gate_batch_v3";

/** What a call carries for the team's policy: the arguments' digest and (redactable) value, the cost estimate. */
export type GateExtra = { digest: string | null; args?: unknown; cost?: Record<string, number> };
/** A call as the statement takes it: the input, with its arguments and cost turned into the policy's extra. */
export type GateArgs = Omit<GateInput, "arguments" | "cost"> & { extra?: GateExtra | null };

/**
 * Many `gate` calls in one statement, one transaction, one commit (docs/gate.md#batches). Each answer is
 * the one quiesce_gate would have given that call; none is returned before the batch committed.
 */
export async function callGateBatch(calls: GateArgs[], via: Queryable = gatePool()): Promise<RawAnswer[]> {
  const res = await (via as pg.Pool).query<{ r: RawAnswer[] }>({
    ...(setting("QUIESCE_DB_POOLER") === "transaction" ? {} : { name: GATE_BATCH_STATEMENT_NAME }),
    text: GATE_BATCH_STATEMENT,
    values: [
      calls.map((c) => c.keyHash),
      calls.map((c) => c.runId),
      calls.map((c) => c.leaseId),
      calls.map((c) => c.epoch),
      calls.map((c) => c.operationId),
      calls.map((c) => c.tool),
      calls.map(() => newId("op")),
      BREAKER_DEFAULTS.coolDownMs,
      BREAKER_DEFAULTS.probeTimeoutMs,
      calls.some((c) => c.extra) ? JSON.stringify(calls.map((c) => c.extra ?? null)) : null,
    ],
  });
  const answers = res.rows[0]?.r;
  if (!Array.isArray(answers) || answers.length !== calls.length) throw new Error("quiesce_gate_batch returned a wrong number of answers");
  return answers;
}

interface Waiting {
  args: GateArgs;
  since: number;
  resolve: (r: RawAnswer) => void;
  reject: (e: unknown) => void;
}

/** Deadlock / serialization failure: nothing was committed, the whole batch may simply run again. */
const RETRYABLE = new Set(["40P01", "40001"]);
/** The database is slow or gone (timeouts, cancelled, connection trouble): every call of the batch is unavailable. */
function unavailable(err: unknown): boolean {
  const code = (err as { code?: unknown }).code;
  return typeof code !== "string" || code.startsWith("08") || code.startsWith("57") || code === "55P03";
}

/** How a batcher decides: one call alone (quiesce_gate), several as one batch (quiesce_gate_batch). */
export interface GateDeciders {
  one(args: GateArgs): Promise<RawAnswer>;
  many(args: GateArgs[]): Promise<RawAnswer[]>;
}
const DATABASE_DECIDERS: GateDeciders = { one: (a) => callGateFunction("gate", a), many: (b) => callGateBatch(b) };

/** Fair share between teams (docs/gate.md#fair-share): which team a call is for, and each team's cap in flight. */
export interface GateFairShare {
  /** The call's group; the default, its key hash, needs no database (the scheduling tests). */
  teamOf(args: GateArgs): string;
  /** Calls of one group in flight at once (0: no cap). */
  teamCap: number;
}
const BY_KEY: GateFairShare = { teamOf: (a) => a.keyHash, teamCap: 0 };

/**
 * The gate's micro-batcher, one per process, on the gate pool. Up to QUIESCE_GATE_BATCH_INFLIGHT gate
 * statements run at once; a call that arrives while that many are in flight waits, and when one
 * returns, everything waiting (up to QUIESCE_GATE_BATCH_MAX) is sent as one batch. With nothing in
 * flight a call is sent at once, alone, as quiesce_gate: at concurrency 1 nothing changes. With one in
 * flight and a slot free, waiting calls are held up to QUIESCE_GATE_BATCH_HOLD_MS for a fuller batch
 * (worthAnother). Waiting calls are queued per team and taken round-robin, each team with at most
 * `teamCap` calls in flight (FairQueue, docs/gate.md#fair-share).
 * A call that waited longer than the gate's budget is answered control_unavailable (deny), as a pool
 * that could not hand out a connection in time would have made it.
 */
export class GateBatcher {
  private readonly waiting: FairQueue<Waiting>;

  constructor(
    private readonly maxInFlight: number,
    private readonly maxBatch: number,
    private readonly budgetMs: number,
    private readonly holdMs: number,
    /** The database, except in the scheduling tests (test/gate/batcher-schedule.test.ts). */
    private readonly decide: GateDeciders = DATABASE_DECIDERS,
    private readonly fair: GateFairShare = BY_KEY,
  ) {
    this.waiting = new FairQueue<Waiting>(fair.teamCap);
  }

  private sweep: NodeJS.Timeout | null = null;
  /** How many calls each statement in flight carries (one entry per statement in flight). */
  private sizes: number[] = [];
  private hold: NodeJS.Timeout | null = null;

  /**
   * With a statement already in flight, is another worth sending now? When as many calls wait as the
   * smallest batch in flight carries, or when the oldest has waited holdMs; else not yet, and a timer
   * sends them when that time is up (a statement that hangs on a lock holds the rest back ≤ holdMs).
   * Small batches side by side cost more per decision than one fuller batch a moment later
   * (docs/design/gate-batcher-schedule.md).
   */
  private worthAnother(now: number): boolean {
    if (this.sizes.length === 0 || this.holdMs === 0) return true;
    if (this.waiting.eligible() >= Math.min(...this.sizes)) return true;
    const due = this.waiting.oldestEligible()! + this.holdMs;
    if (now >= due) return true;
    if (!this.hold) {
      this.hold = setTimeout(() => {
        this.hold = null;
        this.pump();
      }, due - now);
      this.hold.unref();
    }
    return false;
  }

  ask(args: GateArgs): Promise<RawAnswer> {
    return new Promise<RawAnswer>((resolve, reject) => {
      this.waiting.push(this.fair.teamOf(args), { args, since: performance.now(), resolve, reject });
      this.pump();
      this.watch();
    });
  }

  /**
   * While calls wait, one timer answers those past the budget even if every statement in flight hangs
   * (until its own query timeout): the gate answers in bounded time, as with a pool-acquire timeout.
   */
  private watch(): void {
    const oldest = this.waiting.oldest();
    if (this.sweep || oldest === undefined) return;
    this.sweep = setTimeout(
      () => {
        this.sweep = null;
        this.waiting.sweep(this.stale(performance.now()));
        this.watch();
      },
      Math.max(1, oldest + this.budgetMs - performance.now() + 1),
    );
    this.sweep.unref();
  }

  /** Answers a call that waited past the budget (and says so), as a pool-acquire timeout would. */
  private stale(now: number): (w: Waiting) => boolean {
    return (w) => {
      if (now - w.since <= this.budgetMs) return false;
      w.reject(new Error(`gate call waited ${Math.round(now - w.since)} ms for a batch`));
      return true;
    };
  }

  private pump(): void {
    while (this.sizes.length < this.maxInFlight && this.waiting.eligible() > 0) {
      const now = performance.now();
      if (!this.worthAnother(now)) return;
      const taken = this.waiting.take(this.maxBatch, this.stale(now));
      if (taken.length === 0) continue;
      const batch = taken.map((t) => t.item);
      this.sizes.push(batch.length);
      // The slot is freed on the next turn of the event loop, not at once: the answers just delivered
      // wake their callers, whose next calls arrive in the microtasks that follow. Freed at once, the
      // first of them would go alone and the rest wait for a later slot (a batch of 1, then one of n-1).
      // The teams' places in flight are given back on the same turn.
      void this.send(batch).finally(() =>
        setImmediate(() => {
          this.sizes.splice(this.sizes.indexOf(batch.length), 1);
          this.waiting.landed(taken);
          this.pump();
        }),
      );
    }
  }

  private async send(batch: Waiting[]): Promise<void> {
    if (batch.length === 1) {
      const w = batch[0]!;
      await this.decide.one(w.args).then(w.resolve, w.reject);
      return;
    }
    batchStats.batches++;
    batchStats.calls += batch.length;
    for (let attempt = 1; ; attempt++) {
      try {
        const answers = await this.decide.many(batch.map((w) => w.args));
        batch.forEach((w, i) => w.resolve(answers[i]!));
        return;
      } catch (err) {
        const code = (err as { code?: unknown }).code;
        if (typeof code === "string" && RETRYABLE.has(code) && attempt < 3) continue;
        if (unavailable(err)) {
          for (const w of batch) w.reject(err);
          return;
        }
        // One call's error (nothing was committed) must not become every call's: decide each alone.
        await Promise.all(batch.map((w) => this.decide.one(w.args).then(w.resolve, w.reject)));
        return;
      }
    }
  }
}

/** The process's fair share: by the key's team (looked up once per key), capped by QUIESCE_GATE_TEAM_INFLIGHT. */
const TEAM_FAIR_SHARE = (): GateFairShare => ({ teamOf: (a) => teamOfKeyHash(a.keyHash), teamCap: setting("QUIESCE_GATE_TEAM_INFLIGHT") });

const globalForBatcher = globalThis as unknown as { quiesceGateBatcher?: GateBatcher };
const batchStats = { batches: 0, calls: 0 };

function batcher(): GateBatcher | null {
  const inFlight = setting("QUIESCE_GATE_BATCH_INFLIGHT");
  if (inFlight === 0) return null;
  globalForBatcher.quiesceGateBatcher ??= new GateBatcher(
    inFlight,
    setting("QUIESCE_GATE_BATCH_MAX"),
    setting("QUIESCE_GATE_DB_BUDGET_MS"),
    setting("QUIESCE_GATE_BATCH_HOLD_MS"),
    DATABASE_DECIDERS,
    TEAM_FAIR_SHARE(),
  );
  return globalForBatcher.quiesceGateBatcher;
}

function mapOperation(op: RawAnswer["operation"]): RecordedOperation | undefined {
  if (!op) return undefined;
  const out: RecordedOperation = { operationId: op.operationId, state: op.state };
  if (op.outcomeDetail !== undefined) out.outcomeDetail = op.outcomeDetail;
  const e = op.effectReceipt;
  if (e) {
    out.effectReceipt = {
      effectReceiptId: String(e.effectReceiptId),
      providerOperationId: (e.providerOperationId as string | undefined) ?? null,
      detail: e.detail ?? null,
      committedAt: new Date(String(e.committedAt)).toISOString(),
      rollbackOwner: (e.rollbackOwner as string | undefined) ?? null,
    };
  }
  return out;
}

/**
 * The control record could not be read within the gate's budget (statement, lock or pool-acquire
 * timeout on the gate's pool, or the database is down): the answer is deny, never an error that a
 * caller might treat as "carry on". The server cancelled the statement, so nothing was committed.
 */
const CONTROL_UNAVAILABLE: GateOutcome = { ok: true, decision: "deny", reason: "control_unavailable", currentEpoch: null };

async function orUnavailable<T>(call: () => Promise<T>): Promise<T | null> {
  try {
    return await call();
  } catch (err) {
    if (err instanceof QuiesceError) throw err;
    console.error("[gate] control record unavailable:", (err as Error).message);
    return null;
  }
}

function mapDecision(r: RawAnswer): GateOutcome {
  if (!r.ok) return { ok: false, code: r.code as "unauthenticated" | "forbidden", message: r.message ?? "refused" };
  const out: GateOutcome = { ok: true, decision: r.decision!, reason: r.reason!, currentEpoch: r.currentEpoch ?? null };
  if (r.approvalId) out.approvalId = r.approvalId;
  if (r.budget) out.budget = r.budget;
  const op = mapOperation(r.operation);
  if (op) out.operation = op;
  return out;
}

function gateArgs(i: GateInput): GateArgs {
  if (!Number.isSafeInteger(i.epoch) || i.epoch < 0 || i.epoch > 2_147_483_647) throw badRequest("epoch: must be a non-negative integer");
  return {
    keyHash: checkHash(i.keyHash),
    runId: checkId("runId", i.runId),
    leaseId: checkId("leaseId", i.leaseId),
    epoch: i.epoch,
    operationId: checkId("operationId", i.operationId),
    tool: checkId("tool", i.tool),
    extra: gateExtra(i),
  };
}

/** The arguments' digest is the sha256 of their canonical JSON (RFC 8785): the same call always binds the same way. */
function gateExtra(i: GateInput): GateExtra | null {
  if (i.arguments === undefined && i.cost === undefined) return null;
  const extra: GateExtra = { digest: i.arguments === undefined ? null : sha256Hex(canonicalJson(i.arguments)) };
  if (i.arguments !== undefined) extra.args = i.arguments;
  if (i.cost !== undefined) {
    for (const [unit, n] of Object.entries(i.cost))
      if (!Number.isFinite(n) || n < 0) throw badRequest(`cost.${unit}: must be a non-negative number`);
    extra.cost = i.cost;
  }
  return extra;
}

/**
 * Several gate calls decided as ONE batch (quiesce_gate_batch), answers in input order — what the
 * batcher does with calls that arrive together, made explicit for tests and tools. A database failure
 * answers every call control_unavailable (nothing was committed).
 */
export async function gateCheckBatch(inputs: GateInput[], via?: Queryable): Promise<GateOutcome[]> {
  const args = inputs.map(gateArgs);
  if (args.length === 0) return [];
  const started = performance.now();
  const rs = await orUnavailable(() => callGateBatch(args, via));
  const out = rs ? rs.map(mapDecision) : args.map(() => CONTROL_UNAVAILABLE);
  for (const o of out) if (o.ok) recordGateDecision("gate", o.decision, o.reason, started);
  return out;
}

/**
 * A batcher of its own with the given number of statements in flight (gateCheck uses the process's,
 * sized by QUIESCE_GATE_BATCH_INFLIGHT): the bench compares sizes in one run. `fair`: fair share by
 * team with this cap in flight (0: none), or "fifo": one queue for every call, first come first served
 * (what the batcher did before fair share, for the bench).
 */
export function gateBatcher(
  inFlight: number,
  holdMs = setting("QUIESCE_GATE_BATCH_HOLD_MS"),
  fair: { teamCap: number } | "fifo" = { teamCap: setting("QUIESCE_GATE_TEAM_INFLIGHT") },
): (i: GateInput) => Promise<GateOutcome> {
  const share: GateFairShare =
    fair === "fifo" ? { teamOf: () => "all", teamCap: 0 } : { teamOf: (a) => teamOfKeyHash(a.keyHash), teamCap: fair.teamCap };
  const b = new GateBatcher(
    Math.max(1, inFlight),
    setting("QUIESCE_GATE_BATCH_MAX"),
    setting("QUIESCE_GATE_DB_BUDGET_MS"),
    holdMs,
    DATABASE_DECIDERS,
    share,
  );
  return async (i) => {
    const args = gateArgs(i);
    const r = await orUnavailable(() => b.ask(args));
    return r ? mapDecision(r) : CONTROL_UNAVAILABLE;
  };
}

/** How many batches this process sent, and how many calls they carried (the bench and tests read it). */
export function gateBatchStats(): { batches: number; calls: number } {
  return { ...batchStats };
}

/** POST /api/v1/gate: ask before a protected action. */
export async function gateCheck(i: GateInput, via?: Queryable, traceparent?: string | null): Promise<GateOutcome> {
  const args = gateArgs(i);
  return measuredCheck(
    "gate",
    traceparent,
    { "quiesce.run_id": args.runId, "quiesce.operation_id": args.operationId, "quiesce.tool": args.tool },
    async () => {
      // With the default pool, the call joins the process's batcher; a caller's own client (the bench's
      // per-connection line, a test's transaction) is asked directly.
      const b = via === undefined ? batcher() : null;
      const r = await orUnavailable(() => (b ? b.ask(args) : callGateFunction("gate", args, via)));
      return r ? mapDecision(r) : CONTROL_UNAVAILABLE;
    },
  );
}

/**
 * A gate or admit check in its span (gateSpan is a plain call when tracing is off, the default: no span,
 * no context work), its decision counted with its latency.
 */
async function measuredCheck<T extends AdmitOutcome>(
  check: "gate" | "admit",
  traceparent: string | null | undefined,
  attributes: Parameters<typeof gateSpan>[2],
  fn: () => Promise<T>,
): Promise<T> {
  const started = performance.now();
  const out = await gateSpan(`quiesce.${check}`, traceparent, attributes, fn);
  if (out.ok) recordGateDecision(check, out.decision, out.reason, started);
  return out;
}

function operationArgs(i: OperationInput) {
  const leaseId = i.leaseId == null ? null : checkId("leaseId", i.leaseId);
  return { keyHash: checkHash(i.keyHash), operationId: checkId("operationId", i.operationId), leaseId };
}

/** POST /api/v1/operations/{id}/admit: the dequeue-time check of registered work. */
export async function admitCheck(i: OperationInput, via?: Queryable, traceparent?: string | null): Promise<AdmitOutcome> {
  const args = operationArgs(i);
  return measuredCheck("admit", traceparent, { "quiesce.operation_id": args.operationId }, async (): Promise<AdmitOutcome> => {
    const r = await orUnavailable(() => callGateFunction("admit", args, via));
    if (!r) return CONTROL_UNAVAILABLE;
    if (!r.ok && r.code === "not_found") return { ok: false, code: "not_found", message: r.message ?? "operation not found" };
    return mapDecision(r);
  });
}

/** POST /api/v1/operations/{id}/heartbeat: continue while allowed or merely paused. */
export async function heartbeatCheck(i: OperationInput, via?: Queryable): Promise<HeartbeatOutcome> {
  const args = operationArgs(i);
  const r = await orUnavailable(() => callGateFunction("heartbeat", args, via));
  // A heartbeat cannot be answered in time: 503, so the worker applies its own unreachable policy
  // instead of reading a transient stall as "stop".
  if (!r) throw new QuiesceError("unavailable", "control record unavailable: retry");
  if (!r.ok) return { ok: false, code: r.code as "unauthenticated" | "forbidden" | "not_found", message: r.message ?? "refused" };
  return { ok: true, continue: r.continue === true, reason: r.reason!, currentEpoch: r.currentEpoch ?? null };
}
