// The provider of kind "a2a" (docs/design/mcp-tasks.md): the remote A2A agent that holds a task the A2A
// gateway recorded (operations.provider_job_id = the task id), at providers.endpoint (its JSON-RPC URL).
// Cancel is CancelTask (v1.0; tasks/cancel for a v0.3 agent); the check is GetTask (tasks/get):
//   completed            → effect present, final (the sha256 of its artifacts and status rides along)
//   canceled             → the row's status_url effect check, when there is one; else "unavailable", final
//   failed / rejected    → "unavailable", final (unknown; a person reconciles)
//   anything else, or no answer → "unavailable", not final: asked again until the deadline
// TaskNotCancelableError (-32002) is the cancel answer `rejected`; what the task then does, the check reads.
import "server-only";
import { canonicalJson, sha256Hex } from "../../../control/canonical";
import type { CancelAnswer, EffectAnswer, Provider, ProviderConfig, ProviderOperationRef } from "./types";

const TASK_NOT_CANCELABLE = -32002;
const V1 = { get: "GetTask", cancel: "CancelTask" };
const V03 = { get: "tasks/get", cancel: "tasks/cancel" };

type Rpc = { result?: Record<string, unknown>; error?: { code: number; message: string } };

function state(s: unknown): string {
  return typeof s === "string"
    ? s
        .replace(/^TASK_STATE_/, "")
        .toLowerCase()
        .replace(/_/g, "-")
    : "unknown";
}

export class A2aProvider implements Provider {
  constructor(
    readonly config: ProviderConfig,
    private readonly effectCheck: (op: ProviderOperationRef) => Promise<EffectAnswer>,
  ) {}

  private async call(v1: boolean, method: string, id: string): Promise<Rpc> {
    const res = await fetch(this.config.endpoint ?? "", {
      method: "POST",
      headers: { "content-type": "application/json", ...(v1 ? { "a2a-version": "1.0" } : {}) },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params: { id } }),
      signal: AbortSignal.timeout(this.config.timeoutMs),
    });
    return (await res.json()) as Rpc;
  }

  /** v1.0 first; an agent that does not know it (method not found, version not supported) is asked in v0.3. */
  private async ask(which: "get" | "cancel", id: string): Promise<Rpc> {
    const r = await this.call(true, V1[which], id);
    if (r.error && (r.error.code === -32601 || r.error.code === -32009)) return this.call(false, V03[which], id);
    return r;
  }

  /** A2A defines no way to undo a finished task: a person records the recovery (docs/evidence.md#recovery). */
  async requestCompensation(): Promise<CancelAnswer> {
    return { response: "unsupported", detail: { reason: "A2A defines no compensation for a finished task" } };
  }

  async requestCancel(op: ProviderOperationRef): Promise<CancelAnswer> {
    if (!op.providerJobId) return { response: "unsupported", detail: { reason: "no task id was recorded for this call" } };
    try {
      const r = await this.ask("cancel", op.providerJobId);
      if (!r.error) return { response: "accepted", detail: { method: "CancelTask", taskId: op.providerJobId } };
      const why = r.error.code === TASK_NOT_CANCELABLE ? "TaskNotCancelableError" : `JSON-RPC error ${r.error.code}`;
      return { response: "rejected", detail: { method: "CancelTask", taskId: op.providerJobId, error: `${why}: ${r.error.message}` } };
    } catch (err) {
      return { response: "unreachable", detail: { method: "CancelTask", taskId: op.providerJobId, error: (err as Error).message } };
    }
  }

  async checkEffect(op: ProviderOperationRef): Promise<EffectAnswer> {
    const id = op.providerJobId;
    if (!id) return { effect: "unavailable", final: false, detail: { reason: "no task id was recorded for this call" } };
    let r: Rpc;
    try {
      r = await this.ask("get", id);
    } catch (err) {
      const said = `the A2A agent did not answer GetTask for task ${id}`;
      return { effect: "unavailable", final: false, detail: { said, reason: (err as Error).message, taskId: id } };
    }
    if (r.error || !r.result) {
      const said = `the A2A agent answered GetTask for task ${id} with ${r.error ? `error ${r.error.code}` : "no result"}`;
      return { effect: "unavailable", final: false, detail: { said, reason: r.error?.message ?? "no result", taskId: id } };
    }
    const task = ((r.result.task as Record<string, unknown> | undefined) ?? r.result) as Record<string, unknown>;
    const status = (task.status ?? {}) as Record<string, unknown>;
    const s = state(status.state);
    const at = typeof status.timestamp === "string" ? status.timestamp : null;
    const said = `the A2A agent reported task ${id} ${s}${at ? ` at ${at}` : ""}`;
    const base = { taskId: id, state: s, said };
    if (s === "completed")
      return {
        effect: "present",
        final: true,
        providerOperationId: id,
        committedAt: at,
        detail: { ...base, resultDigest: `sha256:${sha256Hex(canonicalJson({ artifacts: task.artifacts ?? [], status }))}` },
      };
    if (s === "canceled") {
      if (this.config.statusUrl) {
        const check = await this.effectCheck(op);
        return { ...check, detail: { ...base, effectCheck: check.detail ?? null } };
      }
      return { effect: "unavailable", final: true, detail: { ...base, reason: "the agent says canceled; no effect check" } };
    }
    if (s === "failed" || s === "rejected")
      return { effect: "unavailable", final: true, detail: { ...base, reason: `the agent says ${s}` } };
    return { effect: "unavailable", final: false, detail: { ...base, reason: `the task is still ${s}` } };
  }
}
