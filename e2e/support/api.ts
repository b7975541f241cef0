// The machine side of a journey: an agent (or worker) talking to the real HTTP API with a real key,
// exactly as the SDK would. Used to make runs live before an operator acts on them in the browser.
export interface ApiRun {
  runId: string;
  leaseId: string;
  epoch: number;
  rootRunId: string;
}

async function call<T>(baseUrl: string, key: string, method: string, path: string, body?: unknown): Promise<{ status: number; json: T }> {
  const res = await fetch(`${baseUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = (await res.json().catch(() => null)) as T;
  if (res.status >= 400) throw new Error(`${method} ${path} → ${res.status} ${JSON.stringify(json)}`);
  return { status: res.status, json };
}

export class AgentApi {
  constructor(
    private readonly baseUrl: string,
    private readonly key: string,
  ) {}

  async createRun(body: {
    taskId: string;
    title?: string;
    harness?: string;
    parentRunId?: string;
    parentLeaseId?: string;
    leaseTtlSeconds?: number;
  }): Promise<ApiRun> {
    return (await call<ApiRun>(this.baseUrl, this.key, "POST", "/api/v1/runs", body)).json;
  }

  async gate(run: ApiRun, operationId: string, tool: string): Promise<{ decision: string; reason: string }> {
    return (
      await call<{ decision: string; reason: string }>(this.baseUrl, this.key, "POST", "/api/v1/gate", {
        runId: run.runId,
        leaseId: run.leaseId,
        epoch: run.epoch,
        operationId,
        tool,
      })
    ).json;
  }

  async registerOperation(
    run: ApiRun,
    o: {
      operationId: string;
      kind: "queued" | "scheduled" | "retry";
      tool: string;
      providerName?: string;
      providerJobId?: string;
      notBefore?: string;
    },
  ) {
    return (
      await call<{ state: string }>(this.baseUrl, this.key, "POST", "/api/v1/operations", {
        runId: run.runId,
        leaseId: run.leaseId,
        epoch: run.epoch,
        ...o,
      })
    ).json;
  }

  async admit(operationId: string) {
    return (
      await call<{ decision: string; reason: string }>(
        this.baseUrl,
        this.key,
        "POST",
        `/api/v1/operations/${encodeURIComponent(operationId)}/admit`,
        {},
      )
    ).json;
  }

  async heartbeat(operationId: string) {
    return (
      await call<{ continue: boolean }>(
        this.baseUrl,
        this.key,
        "POST",
        `/api/v1/operations/${encodeURIComponent(operationId)}/heartbeat`,
        {},
      )
    ).json;
  }

  async complete(operationId: string, outcome: "succeeded" | "failed") {
    return (
      await call<{ state: string }>(this.baseUrl, this.key, "POST", `/api/v1/operations/${encodeURIComponent(operationId)}/complete`, {
        outcome,
      })
    ).json;
  }
}

export const uid = (prefix: string) => `${prefix}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 7)}`;
