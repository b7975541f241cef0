// A small client for the simulated provider's control API, for tests, evals and the demo fleet.
import "server-only";
import type { SimJob, SimMode } from "./sim-server";

export class SimProviderClient {
  constructor(readonly url: string) {}

  private async req<T>(method: string, path: string, body?: unknown): Promise<T> {
    const res = await fetch(`${this.url}${path}`, {
      method,
      headers: body === undefined ? {} : { "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(10_000),
    });
    const json = (await res.json()) as T & { error?: string };
    if (!res.ok) throw new Error(`provider-sim ${method} ${path}: ${res.status} ${json.error ?? ""}`);
    return json;
  }

  createJob(
    spec: {
      jobId?: string;
      mode?: SimMode;
      compensation?: SimJob["compensation"];
      delayMs?: number;
      commitAfterMs?: number;
      runId?: string;
      operationId?: string;
      detail?: unknown;
    } = {},
  ): Promise<SimJob> {
    return this.req("POST", "/jobs", spec);
  }
  getJob(jobId: string): Promise<SimJob> {
    return this.req("GET", `/jobs/${encodeURIComponent(jobId)}`);
  }
  setMode(jobId: string, mode: SimMode, delayMs?: number): Promise<SimJob> {
    return this.req("POST", `/jobs/${encodeURIComponent(jobId)}/mode`, { mode, ...(delayMs === undefined ? {} : { delayMs }) });
  }
  commit(jobId: string): Promise<SimJob> {
    return this.req("POST", `/jobs/${encodeURIComponent(jobId)}/commit`, {});
  }
  health(): Promise<{ ok: boolean; jobs: number }> {
    return this.req("GET", "/health");
  }
}
