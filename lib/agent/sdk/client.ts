// Typed client for the machine API (docs/architecture.md#the-wire-contract), used by workers, gateways and harness adapters.
// Reads QUIESCE_URL / QUIESCE_API_KEY (options override), enforces its own timeout, and throws
// QuiesceApiError (the control plane said no) or QuiesceUnreachableError (no answer) — callers
// must treat both as deny.
import type { z } from "zod";
import type { CreateRunBody, CreateRunResponse, ListRunsResponse, RunControlView, RunView } from "../../schemas/runs";
import type { GateBody, GateResponse } from "../../schemas/gate";
import type {
  CompleteBody,
  CompleteResponse,
  HeartbeatResponse,
  RecordProviderBody,
  RecordProviderResponse,
  RegisterOperationBody,
  RegisterOperationResponse,
} from "../../schemas/operations";
import type { BreakerResponse, KillResponse, LifecycleResponse } from "../../schemas/control";
import type { CreateStopBody, FinishRunResponse, StopDryRunResponse, StopView } from "../../schemas/stops";
import type { RecordRecoveryInput, RecoveryView } from "../../schemas/recovery";
import type { LedgerView, RestartView } from "../../schemas/restart";
import type { CreateProviderBody, ProviderList, ProviderView } from "../../schemas/providers";
import { ledgerAnswer, type LedgerEntry } from "../../control/restart";
import { QuiesceApiError, QuiesceConfigError, QuiesceUnreachableError, newRequestId } from "./errors";
import { subscribe as subscribeEvents, type RunEvent } from "./events";
import { askGate, type AskGateOptions, type HoldOutcome } from "./hold";
import type { ApprovalView } from "../../schemas/policy";
import { setting } from "../../platform/config";
import { Doorbell } from "../../platform/wait";

export { QuiesceApiError, QuiesceConfigError, QuiesceUnreachableError };

export interface QuiesceClientOptions {
  /** Base URL of the control plane; default env QUIESCE_URL. */
  url?: string;
  /** Bearer API key; default env QUIESCE_API_KEY. */
  apiKey?: string;
  /** Per-request timeout; default 5000 ms. */
  timeoutMs?: number;
  fetch?: typeof fetch;
  /** The fetch for the event stream, a response read while it arrives; default `fetch`. */
  streamFetch?: typeof fetch;
  /**
   * W3C trace context sent as `traceparent` on every call, so the control plane's spans (gate
   * decisions, kills) join the agent's trace: a header value, or a function returning the current one
   * (e.g. from the agent's own OpenTelemetry context). Default: env TRACEPARENT, when set.
   */
  traceparent?: string | (() => string | null | undefined);
}

export interface ListRunsParams {
  limit?: number;
  cursor?: string;
  lifecycle?: "normal" | "paused" | "killed";
  q?: string;
  parentRunId?: string;
  rootsOnly?: boolean;
}

/** Run registration as sent over the wire (input side of the schema: defaults are optional). */
export type CreateRunInput = z.input<typeof CreateRunBody>;
export type CreateRunResult = CreateRunResponse & { status: 200 | 201 };
export type RegisterOperationResult = RegisterOperationResponse & { status: 200 | 201 };

// Barrier and receipt shapes belong to the barrier work (lib/schemas/barriers.ts); typed loosely here.
export type BarrierView = { barrierId: string; phase: string; ladder: Record<string, unknown>; counts: Record<string, unknown> } & Record<
  string,
  unknown
>;
export type StopReceiptBody = Record<string, unknown> & { barrier_id: string; decision: string; digest: string };

export class QuiesceClient {
  readonly url: string;
  readonly timeoutMs: number;
  private readonly apiKey: string | undefined;
  private readonly fetchImpl: typeof fetch;
  private readonly streamFetch: typeof fetch;
  private readonly traceparent: QuiesceClientOptions["traceparent"];

  constructor(options: QuiesceClientOptions = {}) {
    const url = options.url ?? setting("QUIESCE_URL");
    if (!url) throw new QuiesceConfigError("no control plane URL: pass { url } or set QUIESCE_URL");
    this.url = url.replace(/\/+$/, "");
    this.apiKey = options.apiKey ?? setting("QUIESCE_API_KEY");
    this.timeoutMs = options.timeoutMs ?? 5000;
    this.fetchImpl = options.fetch ?? globalThis.fetch.bind(globalThis);
    this.streamFetch = options.streamFetch ?? this.fetchImpl;
    this.traceparent = options.traceparent ?? (process.env.TRACEPARENT || undefined);
  }

  /** Low-level call; returns the parsed JSON and the status. Exposed for extensions (methods added by later features). */
  async request<T>(
    method: string,
    path: string,
    body?: unknown,
    opts: { auth?: boolean; signal?: AbortSignal; requestId?: string } = {},
  ): Promise<{ status: number; json: T }> {
    // One id per call (a retry by the caller is a new call): x-request-id, the id of every server log line.
    const requestId = opts.requestId ?? newRequestId();
    const headers: Record<string, string> = { accept: "application/json", "x-request-id": requestId };
    if (opts.auth !== false) {
      if (!this.apiKey) throw new QuiesceConfigError("no API key: pass { apiKey } or set QUIESCE_API_KEY");
      headers.authorization = `Bearer ${this.apiKey}`;
    }
    if (body !== undefined) headers["content-type"] = "application/json";
    const tp = typeof this.traceparent === "function" ? this.traceparent() : this.traceparent;
    if (tp) headers.traceparent = tp;
    const timeout = AbortSignal.timeout(this.timeoutMs);
    const signal = opts.signal ? AbortSignal.any([timeout, opts.signal]) : timeout;
    let res: Response;
    let text: string;
    try {
      res = await this.fetchImpl(`${this.url}${path}`, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        signal,
      });
      text = await res.text();
    } catch (err) {
      const timedOut = timeout.aborted;
      throw new QuiesceUnreachableError(
        timedOut
          ? `control plane did not answer within ${this.timeoutMs} ms (${method} ${path})`
          : `control plane unreachable at ${this.url} (${method} ${path}): ${(err as Error)?.message ?? err}`,
        { cause: err, timedOut, requestId },
      );
    }
    let json: unknown = undefined;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      if (res.ok)
        throw new QuiesceApiError(res.status, "bad_response", `control plane sent non-JSON (${method} ${path})`, undefined, requestId);
    }
    if (!res.ok) {
      const e = (json as { error?: { code?: string; message?: string; details?: unknown } } | undefined)?.error;
      throw new QuiesceApiError(
        res.status,
        e?.code ?? `http_${res.status}`,
        e?.message ?? `HTTP ${res.status} (${method} ${path})`,
        e?.details,
        requestId,
      );
    }
    return { status: res.status, json: json as T };
  }

  private async call<T>(method: string, path: string, body?: unknown): Promise<T> {
    return (await this.request<T>(method, path, body)).json;
  }

  // ── runs ──
  async createRun(body: CreateRunInput): Promise<CreateRunResult> {
    const r = await this.request<CreateRunResponse>("POST", "/api/v1/runs", body);
    return { ...r.json, status: r.status === 200 ? 200 : 201 };
  }
  getRun(runId: string): Promise<RunView> {
    return this.call("GET", `/api/v1/runs/${enc(runId)}`);
  }
  /** What stops the run now (its own and its ancestors' lifecycles, and matching fleet stops): what a supervisor follows. */
  getRunControl(runId: string): Promise<RunControlView> {
    return this.call("GET", `/api/v1/runs/${enc(runId)}/control`);
  }
  listRuns(query: ListRunsParams = {}): Promise<ListRunsResponse> {
    const qs = new URLSearchParams();
    for (const [k, v] of Object.entries(query)) if (v !== undefined) qs.set(k, String(v));
    const s = qs.toString();
    return this.call("GET", `/api/v1/runs${s ? `?${s}` : ""}`);
  }

  // ── gate and operations ──
  /** Asks the gate; for a restarted run whose ledger is loaded, an inherited operationId is answered by the ledger first. */
  gate(body: GateBody): Promise<GateResponse> {
    const entry = this.ledgers.get(body.runId)?.get(body.operationId);
    const a = entry ? ledgerAnswer(entry, body.runId) : null;
    if (a && "local" in a) return Promise.resolve(a.local);
    return this.call("POST", "/api/v1/gate", a ? { ...body, operationId: a.operationId } : body);
  }

  /**
   * Asks the gate and waits while it holds (askGate): a pause per `maxHoldMs`, a person's approval per
   * `maxApprovalWaitMs`. Without a `wake` of the caller's own, the run's event stream is opened when the
   * call starts waiting for an approval, so the answer wakes the wait; if it cannot be opened, the
   * periodic re-ask still finds the answer.
   */
  async gateAndWait(body: GateBody, o: AskGateOptions<GateResponse> = {}): Promise<HoldOutcome<GateResponse>> {
    if (o.wake) return askGate(() => this.gate(body), o);
    const bell = new Doorbell();
    const stop = new AbortController();
    let listening = false;
    try {
      return await askGate(() => this.gate(body), {
        ...o,
        wake: () => bell.signal,
        onApproval: async (approvalId, answer) => {
          await o.onApproval?.(approvalId, answer);
          if (listening) return;
          listening = true;
          await this.subscribe(body.runId, () => bell.ring(), stop.signal).catch(() => undefined);
        },
      });
    } finally {
      stop.abort();
    }
  }

  // ── approvals (docs/adapters.md#approvals-and-budgets) ──
  getApproval(approvalId: string): Promise<ApprovalView> {
    return this.call("GET", `/api/v1/approvals/${enc(approvalId)}`);
  }
  /** A person answers (their operator key; never the run's holder). */
  decideApproval(approvalId: string, body: { decision: "approve" | "deny"; note?: string }): Promise<ApprovalView> {
    return this.call("POST", `/api/v1/approvals/${enc(approvalId)}/decision`, body);
  }

  // ── restart on settled ground (docs/evidence.md#restart) ──
  private readonly ledgers = new Map<string, Map<string, LedgerEntry>>();
  /** Loads a restarted run's ledger into this client, so its gate answers inherited operationIds (once per run). */
  async loadLedger(runId: string): Promise<LedgerView> {
    const l = await this.call<LedgerView>("GET", `/api/v1/runs/${enc(runId)}/ledger`);
    this.ledgers.set(runId, new Map(l.operations.map((o) => [o.operationId, o])));
    return l;
  }
  /** Restarts a killed root (operator keys); the new run's ledger is loaded into this client. */
  async restartRun(runId: string, reason: string): Promise<RestartView> {
    const r = await this.call<RestartView>("POST", `/api/v1/runs/${enc(runId)}/restart`, { reason });
    this.ledgers.set(r.runId, new Map(r.ledger.map((o) => [o.operationId, o])));
    return r;
  }
  async registerOperation(body: RegisterOperationBody): Promise<RegisterOperationResult> {
    const r = await this.request<RegisterOperationResponse>("POST", "/api/v1/operations", body);
    return { ...r.json, status: r.status === 200 ? 200 : 201 };
  }
  /** `leaseId`: the lease the holder passed, when this key did not register the work (docs/security/authorization.md#holders). */
  admit(operationId: string, opts: { leaseId?: string } = {}): Promise<GateResponse> {
    return this.call("POST", `/api/v1/operations/${enc(operationId)}/admit`, opts);
  }
  complete(operationId: string, body: CompleteBody): Promise<CompleteResponse> {
    return this.call("POST", `/api/v1/operations/${enc(operationId)}/complete`, body);
  }
  heartbeat(operationId: string, opts: { leaseId?: string } = {}): Promise<HeartbeatResponse> {
    return this.call("POST", `/api/v1/operations/${enc(operationId)}/heartbeat`, opts);
  }
  /** Where a running operation's work is held (a remote task id), so a stop's provider check can ask there. */
  recordProvider(operationId: string, body: RecordProviderBody): Promise<RecordProviderResponse> {
    return this.call("POST", `/api/v1/operations/${enc(operationId)}/provider`, body);
  }

  // ── operator control (operator keys only) ──
  pause(runId: string, reason: string): Promise<LifecycleResponse> {
    return this.call("POST", `/api/v1/runs/${enc(runId)}/pause`, { reason });
  }
  resume(runId: string, reason: string): Promise<LifecycleResponse> {
    return this.call("POST", `/api/v1/runs/${enc(runId)}/resume`, { reason });
  }
  kill(runId: string, reason: string): Promise<KillResponse> {
    return this.call("POST", `/api/v1/runs/${enc(runId)}/kill`, { reason });
  }
  breaker(runId: string, action: "trip" | "reset", reason: string): Promise<BreakerResponse> {
    return this.call("POST", `/api/v1/runs/${enc(runId)}/breaker`, { action, reason });
  }

  /**
   * The run ended (session end, end of a thread): it and its subtree are finished and the gate denies
   * them. Idempotent. Refused (409) while work is queued or running, unless `abandon`.
   */
  finish(runId: string, opts: { abandon?: boolean; leaseId?: string } = {}): Promise<FinishRunResponse> {
    return this.call("POST", `/api/v1/runs/${enc(runId)}/finish`, opts);
  }

  // ── fleet stop (docs/fleet-stop.md; operator keys only) ──
  /** Pause or kill every run of the team matching the filter; `dryRun: true` answers count and sample. */
  createStop(body: z.input<typeof CreateStopBody> & { dryRun: true }): Promise<StopDryRunResponse>;
  createStop(body: z.input<typeof CreateStopBody>): Promise<StopView | StopDryRunResponse>;
  createStop(body: z.input<typeof CreateStopBody>): Promise<StopView | StopDryRunResponse> {
    return this.call("POST", "/api/v1/stops", body);
  }
  getStop(stopId: string): Promise<StopView> {
    return this.call("GET", `/api/v1/stops/${enc(stopId)}`);
  }
  resumeStop(stopId: string, reason: string): Promise<StopView> {
    return this.call("POST", `/api/v1/stops/${enc(stopId)}/resume`, { reason });
  }

  // ── recovery (docs/evidence.md#recovery; people's operator keys: the owner or a manager/admin) ──
  listRecoveries(q: { state?: string; barrierId?: string } = {}): Promise<{ recoveries: RecoveryView[] }> {
    const qs = new URLSearchParams(Object.entries(q).filter((e): e is [string, string] => typeof e[1] === "string"));
    return this.call("GET", `/api/v1/recoveries${qs.size ? `?${qs}` : ""}`);
  }
  assignRecovery(recoveryId: string, assigneeUserId: string): Promise<RecoveryView> {
    return this.call("POST", `/api/v1/recoveries/${enc(recoveryId)}/assign`, { assigneeUserId });
  }
  /** Asks the provider to undo the effect; the answer is `rolled_back` only when its effect check then says absent. */
  startRecovery(recoveryId: string): Promise<RecoveryView> {
    return this.call("POST", `/api/v1/recoveries/${enc(recoveryId)}/start`, {});
  }
  recordRecovery(recoveryId: string, body: RecordRecoveryInput): Promise<RecoveryView> {
    return this.call("POST", `/api/v1/recoveries/${enc(recoveryId)}/record`, body);
  }

  // ── providers (docs/adapters/mcp-gateway.md#registering-a-provider; people's operator keys, admins to register) ──
  listProviders(): Promise<ProviderList> {
    return this.call("GET", "/api/v1/providers");
  }
  createProvider(body: CreateProviderBody): Promise<ProviderView> {
    return this.call("POST", "/api/v1/providers", body);
  }

  // ── barrier and receipt ──
  getBarrier(barrierId: string): Promise<BarrierView> {
    return this.call("GET", `/api/v1/barriers/${enc(barrierId)}`);
  }
  getReceipt(barrierId: string, version?: number): Promise<StopReceiptBody> {
    return this.call("GET", `/api/v1/barriers/${enc(barrierId)}/receipt${version ? `?version=${version}` : ""}`);
  }
  /** A harness reports that its target observed the cancellation (the "observed by target" rung). */
  reportObserved(
    runId: string,
    body: {
      meaning: "unknown" | "signal_accepted" | "turn_interrupted" | "process_terminated";
      evidence?: Record<string, unknown>;
      leaseId?: string;
    },
  ): Promise<{ barrierId: string; runId: string; meaning: string; observedAt: string }> {
    return this.call("POST", `/api/v1/runs/${enc(runId)}/observed`, body);
  }

  /** A supervisor marks its run supervised (the first report) and reports its container's status (docs/environment.md). */
  reportEnvironment(
    runId: string,
    body: {
      mechanism: "cgroup2" | "cgroup1" | "pidns" | "pgroup";
      graceMs: number;
      container?: string;
      liveProcesses?: number;
      frozen?: boolean;
      leaseId?: string;
    },
  ): Promise<{ runId: string; supervised: true; mechanism: string; liveProcesses: number | null; frozen: boolean }> {
    return this.call("POST", `/api/v1/runs/${enc(runId)}/environment`, body);
  }

  /** Server-sent control events of the run's tree (lib/agent/sdk/events.ts); resolves once live. */
  subscribe(runId: string, onEvent: (e: RunEvent) => void, signal: AbortSignal): Promise<void> {
    return subscribeEvents(
      { url: this.url, apiKey: this.apiKey ?? "", fetch: this.streamFetch, timeoutMs: this.timeoutMs },
      runId,
      onEvent,
      signal,
    );
  }

  openapi(): Promise<Record<string, unknown>> {
    return this.request<Record<string, unknown>>("GET", "/api/v1/openapi.json", undefined, { auth: false }).then((r) => r.json);
  }
}

function enc(s: string): string {
  return encodeURIComponent(s);
}
