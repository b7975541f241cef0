// The worker guard's public types: what it needs from the SDK client, its options, the context a
// handler gets, and the outcomes it reports (each one a claim the guard can prove, nothing more).
import type { CompleteBody, CompleteResponse, HeartbeatResponse } from "../../../schemas/operations";
import type { GateResponse } from "../../../schemas/gate";
import type { ControlFeed, Recheck } from "../../abort/tokens";
import type { ExecutorJournal, JournalEffect } from "./journal";
import type { JobStamp } from "./stamp";

/** What the guard needs from the SDK client (QuiesceClient satisfies it). */
/** Every call presents the job's lease: the capability its producer passed (docs/security/authorization.md#holders). */
export interface GuardClient {
  admit(operationId: string, opts?: { leaseId?: string }): Promise<GateResponse>;
  heartbeat(operationId: string, opts?: { leaseId?: string }): Promise<HeartbeatResponse>;
  complete(operationId: string, body: CompleteBody): Promise<CompleteResponse>;
  /** Optional: "observed by target" for the stop ladder (worker keys may not be allowed; ignored). */
  reportObserved?(
    runId: string,
    body: {
      meaning: "signal_accepted" | "turn_interrupted" | "process_terminated";
      evidence?: Record<string, unknown>;
      leaseId?: string;
    },
  ): Promise<unknown>;
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
  constructor(
    message: string,
    readonly cause?: unknown,
  ) {
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
