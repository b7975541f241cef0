// Small helpers shared by the drill cases: runs marked as drill runs, registered work, waiting for a
// receipt, evidence links, checks.
import { randomBytes } from "node:crypto";
import { QuiesceApiError, type CreateRunInput, type CreateRunResult, type QuiesceClient } from "../agent/sdk/client";
import type { JobStamp } from "../agent/sdk/worker/stamp";
import type { Check, DrillContext, Evidence } from "./types";
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
