// The generic HTTP provider (docs/architecture.md#the-cancellation-barrier), configured per providers row:
//
//   cancel_url  POST, JSON body { operationId, providerJobId, runId, tool }
//   status_url  GET, answers { effect: "present"|"absent", final?: boolean, providerOperationId?, committedAt?, detail? }
//   compensate_url  POST, same body as cancel, with the header Idempotency-Key (recovery: undo a completed effect)
//
// Both URLs may be templates with {providerJobId} / {operationId} / {runId} (URL-encoded on
// substitution). A status URL without placeholders gets ?providerJobId=…&operationId=… appended.
// Every call has the row's timeout_ms. Transport failures are answers too: a cancel that cannot be
// delivered is `unreachable`, a status that cannot be read is `unavailable` — never "absent".
import "server-only";
import type { CancelAnswer, EffectAnswer, Provider, ProviderConfig, ProviderOperationRef } from "./types";
import { PROVIDER_RESPONSES } from "../../../control/settlement";
import { expandProviderUrl, hasPlaceholder } from "../../../control/provider-url";
import { A2aProvider } from "./a2a";
import { McpProvider } from "./mcp";

export function expandUrl(template: string, op: ProviderOperationRef, appendQuery: boolean): string {
  const url = expandProviderUrl(template, { providerJobId: op.providerJobId ?? null, operationId: op.operationId, runId: op.runId });
  if (hasPlaceholder(template) || !appendQuery) return url;
  const u = new URL(url);
  if (op.providerJobId) u.searchParams.set("providerJobId", op.providerJobId);
  u.searchParams.set("operationId", op.operationId);
  return u.toString();
}

async function call(url: string, init: RequestInit, timeoutMs: number): Promise<{ status: number; json: unknown } | { error: string }> {
  try {
    const res = await fetch(url, { ...init, signal: AbortSignal.timeout(timeoutMs) });
    const text = await res.text();
    let json: unknown = null;
    try {
      json = text ? JSON.parse(text) : null;
    } catch {
      json = { text: text.slice(0, 500) };
    }
    return { status: res.status, json };
  } catch (err) {
    const e = err as Error & { cause?: { code?: string } };
    return { error: e.name === "TimeoutError" ? `timeout after ${timeoutMs} ms` : (e.cause?.code ?? e.message) };
  }
}

/** Maps a cancel answer: the body's own `status` wins when it is one of ours; otherwise the HTTP status. */
export function cancelResponseFrom(status: number, json: unknown): CancelAnswer["response"] {
  const said = (json as { status?: unknown } | null)?.status;
  if (typeof said === "string" && (PROVIDER_RESPONSES as readonly string[]).includes(said)) return said as CancelAnswer["response"];
  if (status >= 200 && status < 300) return "accepted";
  if (status === 404 || status === 405 || status === 501) return "unsupported";
  if (status >= 400 && status < 500) return "rejected";
  return "unreachable";
}

export function effectAnswerFrom(status: number, json: unknown): EffectAnswer {
  const j = (json ?? {}) as Record<string, unknown>;
  if (status < 200 || status >= 300) return { effect: "unavailable", final: false, detail: { httpStatus: status, body: json } };
  if (j.effect !== "present" && j.effect !== "absent") {
    return { effect: "unavailable", final: false, detail: { reason: "status answer without effect: present|absent", body: json } };
  }
  return {
    effect: j.effect,
    final: j.final === true,
    providerOperationId: typeof j.providerOperationId === "string" ? j.providerOperationId : null,
    committedAt: typeof j.committedAt === "string" ? j.committedAt : null,
    detail: j.detail ?? (typeof j.state === "string" ? { state: j.state } : undefined),
  };
}

export class HttpProvider implements Provider {
  constructor(readonly config: ProviderConfig) {}

  requestCancel(op: ProviderOperationRef): Promise<CancelAnswer> {
    return this.post(this.config.cancelUrl, "cancel_url", op, {});
  }

  requestCompensation(op: ProviderOperationRef, idempotencyKey: string): Promise<CancelAnswer> {
    return this.post(this.config.compensateUrl ?? null, "compensate_url", op, { "idempotency-key": idempotencyKey });
  }

  private async post(url: string | null, name: string, op: ProviderOperationRef, headers: Record<string, string>): Promise<CancelAnswer> {
    if (!url) return { response: "unsupported", detail: { reason: `provider has no ${name}` } };
    const r = await call(
      expandUrl(url, op, false),
      {
        method: "POST",
        headers: { "content-type": "application/json", ...headers },
        body: JSON.stringify({ operationId: op.operationId, providerJobId: op.providerJobId, runId: op.runId, tool: op.tool }),
      },
      this.config.timeoutMs,
    );
    if ("error" in r) return { response: "unreachable", detail: { error: r.error } };
    return { response: cancelResponseFrom(r.status, r.json), detail: { httpStatus: r.status, body: r.json } };
  }

  async checkEffect(op: ProviderOperationRef): Promise<EffectAnswer> {
    if (!this.config.statusUrl) return { effect: "unavailable", final: false, detail: { reason: "provider has no status_url" } };
    const r = await call(
      expandUrl(this.config.statusUrl, op, true),
      { method: "GET", headers: { accept: "application/json" } },
      this.config.timeoutMs,
    );
    if ("error" in r) return { effect: "unavailable", final: false, detail: { error: r.error } };
    return effectAnswerFrom(r.status, r.json);
  }
}

/** Provider for a row. The simulated deployment provider speaks the same protocol over HTTP. */
export function providerFor(config: ProviderConfig): Provider {
  const http = new HttpProvider(config);
  if (config.kind === "mcp") return new McpProvider(config, (op) => http.checkEffect(op));
  if (config.kind === "a2a") return new A2aProvider(config, (op) => http.checkEffect(op));
  return http;
}
