// Small helpers shared by the drill cases: runs marked as drill runs, registered work, waiting for a
// receipt, evidence links, checks.
import { randomBytes } from "node:crypto";
import { QuiesceApiError, type CreateRunInput, type CreateRunResult, type QuiesceClient } from "../agent/sdk/client";
import type { JobStamp } from "../agent/sdk/worker/stamp";
import type { SimProviderClient } from "../modules/stop";
import type { GateBody } from "../schemas/gate";
import type { CaseOutcome, Check, DbInspector, DrillCase, DrillContext, Evidence, Executor, Need, Seed } from "./types";
import { waitFor } from "../platform/wait";

export function must<T>(v: T | undefined | null, what: string): T {
  if (v === undefined || v === null) throw new Error(`this case needs ${what}`);
  return v;
}

export const check = (name: string, ok: boolean, detail?: unknown): Check => ({ name, ok, ...(detail === undefined ? {} : { detail }) });

/** A unique operation id for this drill run. */
export function opId(ctx: DrillContext, label: string): string {
  return `${ctx.tag}.${label}.${randomBytes(4).toString("hex")}`;
}

/** Registers a run (a child with parentRunId) through the agent key, marked as a drill run when asked. */
export async function newRun(ctx: DrillContext, input: Omit<CreateRunInput, "taskId"> & { taskId?: string }): Promise<CreateRunResult> {
  const agent = must(ctx.agent, "an agent key");
  return agent.createRun({
    taskId: `${ctx.tag}-${input.taskId ?? "release-payments"}`,
    ...input,
    ...(ctx.markDrill ? { drill: true } : {}),
  } as CreateRunInput);
}

type Authority = Pick<CreateRunResult, "runId" | "leaseId" | "epoch">;

/** A root run and one child (a subagent) under it. */
export async function newTree(ctx: DrillContext, rootTitle: string, childTitle: string) {
  const root = await newRun(ctx, { title: rootTitle });
  const child = await newRun(ctx, { parentRunId: root.runId, title: childTitle });
  return { root, child };
}

/** A gate call's body under `run`'s authority, with a fresh operation id. */
export function callBody(ctx: DrillContext, run: Authority, label: string, tool: string): GateBody {
  return { runId: run.runId, leaseId: run.leaseId, epoch: run.epoch, operationId: opId(ctx, label), tool };
}

/** A new run whose agent asked the gate for one call: allowed, it is in flight until someone reports it. */
export async function gatedCall(ctx: DrillContext, title: string, label: string, tool: string) {
  const run = await newRun(ctx, { title });
  const body = callBody(ctx, run, label, tool);
  const answer = await must(ctx.agent, "an agent key").gate(body);
  return { run, body, answer };
}

/** Registers queued (or scheduled / retry) work for `run` and returns the stamp its job would carry. */
export async function registerWork(
  ctx: DrillContext,
  run: Authority,
  label: string,
  tool: string,
  kind: "queued" | "scheduled" | "retry" = "queued",
  extra: { providerName?: string; providerJobId?: string; notBefore?: string } = {},
): Promise<JobStamp> {
  const operationId = opId(ctx, label);
  await must(ctx.agent, "an agent key").registerOperation({
    runId: run.runId,
    leaseId: run.leaseId,
    epoch: run.epoch,
    operationId,
    kind,
    tool,
    ...extra,
  });
  return { runId: run.runId, leaseId: run.leaseId, epoch: run.epoch, operationId };
}

/** Queued work that carries a job of the simulated provider, so the barrier asks the provider to cancel it. */
export function providerWork(ctx: DrillContext, run: Authority, providerJobId: string): Promise<JobStamp> {
  const providerName = must(ctx.sim, "the simulated provider").provider;
  return registerWork(ctx, run, "reserve-preview", "deployment.reserve_preview", "queued", { providerName, providerJobId });
}

/** Registers a job for `run` and has the worker run it as a long call; returns once it started (or its delivery ended). */
export async function startLongJob(ctx: DrillContext, worker: Executor, run: Authority, label: string, tool: string) {
  const stamp = await registerWork(ctx, run, label, tool);
  const handle = worker.run(stamp, { kind: "long" });
  const started = await handle.started;
  return { stamp, handle, started };
}

export { waitFor };

export type ReceiptBody = Record<string, unknown> & {
  barrier_id: string;
  decision: string;
  digest: string;
  version: number;
  observed_by_target?: unknown;
  effects?: { completed_and_verified?: number; cancelled_without_effect?: number; unknown?: number };
  work?: { queued_cancelled?: number; in_flight_settled?: number; scheduled_retries_cancelled?: number };
  reconciliation?: { operation_id: string; assignee: string | null }[];
  effect_receipts?: { operation_id: string; provider_operation_id?: string | null; rollback_owner?: string | null }[];
};

/** A fleet stop's view once its fleet receipt is issued. */
export async function waitForFleetReceipt(ctx: DrillContext, stopId: string) {
  return waitFor(
    `the fleet receipt of ${stopId}`,
    async () => {
      const v = await ctx.operator.getStop(stopId);
      return v.receipt ? v : null;
    },
    ctx.receiptTimeoutMs,
    250,
  );
}

/** The barrier's receipt (latest version), once the engine issued it; `minVersion` waits for a re-issue. */
export async function waitForReceipt(ctx: DrillContext, client: QuiesceClient, barrierId: string, minVersion = 1): Promise<ReceiptBody> {
  return waitFor(
    `the stop receipt of ${barrierId}`,
    async () => {
      try {
        const r = (await client.getReceipt(barrierId)) as ReceiptBody & { version: number };
        return r.version >= minVersion ? r : null;
      } catch (err) {
        if (err instanceof QuiesceApiError && err.status === 404) return null;
        throw err;
      }
    },
    ctx.receiptTimeoutMs,
    250,
  );
}

export interface BarrierSettlement {
  operationId: string;
  stateAtBarrier: string;
  settledState: string | null;
  providerResponse: string | null;
  effectObserved: string | null;
  reconciliation: { status: string; assignee: string | null } | null;
}
export interface BarrierViewLite {
  barrierId: string;
  phase: string;
  decision: string | null;
  ladder: Record<string, { status: string; at: string | null; evidence: Record<string, unknown> }>;
  counts: Record<string, number>;
  settlements: BarrierSettlement[];
  receipts: { version: number; decision: string }[];
}

export async function barrierView(client: QuiesceClient, barrierId: string): Promise<BarrierViewLite> {
  return (await client.getBarrier(barrierId)) as unknown as BarrierViewLite;
}

/** The operator kills `runId`; returns the barrier once it issued its first receipt, with its view then. */
export async function killToReceipt(ctx: DrillContext, runId: string, reason: string) {
  const { barrierId } = await ctx.operator.kill(runId, reason);
  const receipt = await waitForReceipt(ctx, ctx.operator, barrierId);
  const view = await barrierView(ctx.operator, barrierId);
  return { barrierId, receipt, view };
}

type ProviderMode = NonNullable<Parameters<SimProviderClient["createJob"]>[0]>["mode"];

/** A deployment preview whose queued call carries a simulated-provider job in `mode`, admitted (so
 * running at the kill), then killed: the barrier's first receipt and the call's settlement in it. */
export async function killProviderCall(
  ctx: DrillContext,
  mode: ProviderMode,
  reason: string,
  job$: Omit<NonNullable<Parameters<SimProviderClient["createJob"]>[0]>, "mode" | "runId"> = {},
) {
  const run = await newRun(ctx, { title: "deployment preview" });
  const job = await must(ctx.sim, "the simulated provider").client.createJob({ ...job$, mode, runId: run.runId });
  const stamp = await providerWork(ctx, run, job.jobId);
  const admitted = await must(ctx.agent, "an agent key").admit(stamp.operationId);
  const stop = await killToReceipt(ctx, run.runId, reason);
  return { run, job, stamp, admitted, ...stop, settlement: settlementOf(stop.view, stamp.operationId) };
}

export const settlementOf = (view: BarrierViewLite, operationId: string) => view.settlements.find((x) => x.operationId === operationId);

/** One check on what the database holds, when the context can read it (evals); none against a live deployment. */
export async function dbCheck<T>(
  ctx: DrillContext,
  probe: (db: DbInspector) => Promise<T>,
  name: string,
  ok: (v: T) => boolean,
  detail: (v: T) => unknown = (v) => v,
): Promise<Check[]> {
  if (!ctx.db) return [];
  const v = await probe(ctx.db);
  return [check(name, ok(v), detail(v))];
}

/** Links a reviewer can open: the console's receipt page, the barrier and receipt in the API, the run. */
export function links(ctx: DrillContext, ids: { runId?: string; barrierId?: string }): Evidence[] {
  const base = ctx.baseUrl.replace(/\/+$/, "");
  const out: Evidence[] = [];
  if (ids.barrierId) {
    out.push({ label: "stop receipt (console)", url: `${base}/receipts/${encodeURIComponent(ids.barrierId)}` });
    out.push({ label: "receipt (API)", url: `${base}/api/v1/barriers/${encodeURIComponent(ids.barrierId)}/receipt` });
    out.push({ label: "barrier (API)", url: `${base}/api/v1/barriers/${encodeURIComponent(ids.barrierId)}` });
  }
  if (ids.runId) {
    out.push({ label: "run (console)", url: `${base}/runs/${encodeURIComponent(ids.runId)}` });
    out.push({ label: "run (API)", url: `${base}/api/v1/runs/${encodeURIComponent(ids.runId)}` });
  }
  return out;
}

/** Whether a gate answer (or a recorded decision) is `decision` for `reason`. */
export const answered = (a: { decision: string; reason?: string | null }, decision: string, reason: string) =>
  a.decision === decision && a.reason === reason;

/** `deny parent_revoked` → "deny_parent_revoked". */
export const label = (decision: string, reason?: string) => (reason ? `${decision}_${reason}` : decision);

/** The status a refused request got (or "ok" when it was not refused). */
export async function statusOf(p: Promise<unknown>): Promise<number | "ok" | "unreachable"> {
  try {
    await p;
    return "ok";
  } catch (err) {
    if (err instanceof QuiesceApiError) return err.status;
    return "unreachable";
  }
}

/** Who a case acts through. The runner skips a case whose needs the context cannot meet; a case run
 * without the runner fails on the first party it lacks, naming it. */
export interface Parties {
  agent: QuiesceClient;
  worker: Executor;
  pod: Executor;
  sim: NonNullable<DrillContext["sim"]>;
  stranger: QuiesceClient;
}

const PARTIES: { [K in keyof Parties]: (ctx: DrillContext) => Parties[K] } = {
  agent: (ctx) => must(ctx.agent, "an agent key"),
  worker: (ctx) => must(ctx.worker, "a worker"),
  pod: (ctx) => must(ctx.pod, "a second process"),
  sim: (ctx) => must(ctx.sim, "the simulated provider"),
  stranger: (ctx) => must(ctx.stranger, "a second machine key of the team"),
};

/** Each party is taken from the context only when the case asks for it. */
function parties(ctx: DrillContext): Parties {
  const p = {} as Parties;
  for (const [k, take] of Object.entries(PARTIES)) Object.defineProperty(p, k, { get: () => take(ctx), enumerable: true });
  return p;
}

/** A drill case: every one needs the agent key (and so the worker and second process); `needs` adds more. */
export function drillCase(
  name: string,
  seed: Seed,
  expected: string,
  def: { summary: string; needs?: Need[]; run(ctx: DrillContext, parties: Parties): Promise<CaseOutcome> },
): DrillCase {
  return { name, seed, expected, summary: def.summary, needs: ["agent", ...(def.needs ?? [])], run: (ctx) => def.run(ctx, parties(ctx)) };
}
