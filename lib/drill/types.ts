// The vocabulary of the cancellation drills (docs/evals.md): the races from the three source articles,
// written once, run by `npm run evals` (against processes it starts on fresh data) and by
// `quiesce drill` (against a live deployment). A case talks to Quiesce only over HTTP through the
// SDK; what it reports as "observed" is read back from the system (API answers, receipts, DB rows
// when an inspector is given), never restated from what the case did.
import type { QuiesceClient } from "../agent/sdk/client";
import type { SimProviderClient } from "../modules/stop";
import type { GateBody } from "../schemas/gate";
import type { JobStamp } from "../agent/sdk/worker/stamp";

export type Seed = "000" | "001" | "004";

/** What a case needs from its context; a case whose needs are missing is reported as skipped. */
export type Need = "agent" | "sim" | "viewer" | "otherTeam" | "stranger";

export interface Check {
  name: string;
  ok: boolean;
  detail?: unknown;
}
export interface Evidence {
  label: string;
  url: string;
}

/** What a case saw. `observed` is a label derived from system answers, compared with `expected`. */
export interface CaseOutcome {
  observed: string;
  checks: Check[];
  evidence: Evidence[];
  facts?: Record<string, unknown>;
}

export type CaseStatus = "pass" | "fail" | "skip" | "error";

export interface CaseResult {
  name: string;
  seed: Seed;
  expected: string;
  observed: string;
  status: CaseStatus;
  checks: Check[];
  evidence: Evidence[];
  facts: Record<string, unknown>;
  durationMs: number;
  /** Why it was skipped, or the error that ended it. */
  note?: string;
}

export interface CaseDef<C> {
  name: string;
  seed: Seed;
  expected: string;
  /** One line: the race, the expected answer, why. */
  summary: string;
  needs: Need[];
  run(ctx: C): Promise<CaseOutcome>;
}

/** A job's behaviour inside the worker guard. */
export type JobBehaviour =
  | { kind: "quick"; effectId?: string }
  /** Waits for its abort signal: a long call that honours cancellation. */
  | { kind: "long" }
  | { kind: "fail" }
  /** Appends one line to `file` (a local side effect) and records it in the executor's receipt. */
  | { kind: "artifact"; file: string };

export interface RunOptions {
  /** Executor-side receipts (one file per operation) kept in this folder: survives the process. */
  journalDir?: string;
  /** Lose the transport of this job's completion report once. */
  loseComplete?: "before_server" | "after_server";
}

export interface AdmitAnswer {
  decision: string;
  reason: string;
}

export interface ExecOutcome {
  status: string;
  reason?: string;
  cause?: string;
  reconciled?: boolean;
  /** Whether the handler ran at all in this delivery. */
  handlerStarted: boolean;
  /** State of the operation as the gate reported it on an already_applied answer. */
  recordedState?: string;
}

export interface RunHandle {
  operationId: string;
  /** The first admission answer of this delivery (hold, allow or deny). */
  firstAdmit: Promise<AdmitAnswer>;
  /** true once the handler starts; false when the delivery ended without running it. */
  started: Promise<boolean>;
  outcome: Promise<ExecOutcome>;
}

export interface CallAnswer {
  decision: string;
  reason: string;
  currentEpoch: number | null;
  /** The executor called the provider (only ever after an allow). */
  externalCallSent: boolean;
  error?: string;
}

/** A worker (or gateway) that acts through the SDK worker guard: in-process for drills, a child process in evals. */
export interface Executor {
  readonly label: string;
  run(stamp: JobStamp, job: JobBehaviour, opts?: RunOptions): RunHandle;
  /** A tool call through the gate; on allow, the external call goes to the simulated provider (when given). */
  call(body: GateBody, external?: { simUrl: string }): Promise<CallAnswer>;
  /** Registers a retry of `stamp` now (kind retry, same lease and epoch) and fires it from a local timer later. */
  scheduleRetry(stamp: JobStamp, tool: string, delayMs: number, job: JobBehaviour): Promise<RunHandle>;
  close(): Promise<void>;
}

/** Read-only facts from the database, offered by `npm run evals` (never by a drill against a live deployment). */
export interface DbInspector {
  operation(
    operationId: string,
  ): Promise<{ state: string; stateReason: string | null; kind: string; effectReceipts: number; outcomeDetail: unknown } | null>;
  decisions(operationId: string): Promise<{ source: string; decision: string; reason: string; at: Date }[]>;
  settlement(operationId: string): Promise<{
    stateAtBarrier: string;
    settledState: string | null;
    providerResponse: string | null;
    effectObserved: string | null;
  } | null>;
  receipts(barrierId: string): Promise<{ version: number; decision: string }[]>;
  /** Audit rows whose target is `target` (a run id). */
  auditCount(target: string): Promise<number>;
  /** A manager assigns the barrier's open reconciliation (the console's action); returns the assignee's email. */
  assignReconciliation(barrierId: string): Promise<string | null>;
  /** Removes a run's lease row: a control record that has gone missing. */
  dropLease(leaseId: string): Promise<void>;
  /** The claims kept for an operation (late reports after a stop). */
  claimCount(operationId: string): Promise<number>;
}

export interface DrillContext {
  /** Base URL of the Quiesce under test (evidence links point here). */
  baseUrl: string;
  operator: QuiesceClient;
  /** Agent (or gateway) key of the same team: registers runs and work. */
  agent?: QuiesceClient;
  /** The worker that runs jobs through the guard. */
  worker?: Executor;
  /** Another process (pod) that asks the gate. */
  pod?: Executor;
  sim?: { client: SimProviderClient; url: string; provider: string };
  /** An operator key of a user whose role is viewer (same team). */
  viewer?: QuiesceClient;
  /** An operator key of another team. */
  otherTeam?: QuiesceClient;
  /** A machine key of the same team that holds none of the drill's runs (the third kind of caller). */
  stranger?: QuiesceClient;
  db?: DbInspector;
  /** Register runs with `drill: true`. */
  markDrill: boolean;
  /** Unique per drill run; prefixes task and operation ids. */
  tag: string;
  /** Longest wait for a barrier to issue its receipt. */
  receiptTimeoutMs: number;
  /** A scratch folder for executor receipts and artifacts. */
  scratchDir: string;
  log(line: string): void;
}

export type DrillCase = CaseDef<DrillContext>;
