// Delivers the webhook outbox: at least once (a crash after the receiver answered but before the row
// is marked means a second send with the same event id; receivers de-duplicate on it), in order per
// run and endpoint, with exponential backoff and a dead-letter state after the last attempt.
import "server-only";
import { claimDueDeliveries, markDelivered, markFailed } from "./outbox";
import { integrationsConfig } from "../../platform/config/integrations";
import { sleep } from "../../platform/wait";
import { retryDelayMs, signWebhook, SIGNATURE_HEADER } from "./events";
import { checkWebhookTarget, type LookupAll } from "./target";
import { postPinned } from "./send";
import { logger } from "../../platform/log";

/** What a delivery that got no HTTP answer stores, for every cause. */
export const DELIVERY_FAILED = "delivery failed: no answer from the endpoint (the cause is in the webhook worker's log)";

/** The endpoint's origin for the log (a path or query may carry a receiver's token). */
function endpointOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return "(not a URL)";
  }
}

function causeOf(e: unknown): string {
  const err = e as Error & { code?: string; cause?: Error & { code?: string } };
  if (err.name === "TimeoutError") return "timed out";
  return [err.code, err.message, err.cause?.code ?? err.cause?.message].filter(Boolean).join(": ");
}

const SYSTEM = { type: "system", name: "webhook-worker" } as const;

export interface WebhookWorkerOptions {
  retryBaseMs?: number;
  retryMaxMs?: number;
  maxAttempts?: number;
  timeoutMs?: number;
  pollMs?: number;
  batch?: number;
  /** Only this team's outbox (tests; a deployment delivers every team's). */
  teamId?: string | null;
  /** The resolver (tests play one that changes its answer); default the system's. */
  lookup?: LookupAll;
}

/** One pass: claims what is due and sends it. Returns how many were attempted. */
export async function deliverDueOnce(opts: WebhookWorkerOptions = {}): Promise<number> {
  const cfg = { ...integrationsConfig().webhook, ...opts };
  const due = await claimDueDeliveries(SYSTEM, opts.batch ?? 50, cfg.timeoutMs + 5_000, opts.teamId ?? null);
  await Promise.all(
    due.map(async (d) => {
      const body = JSON.stringify(d.event);
      let error: string | null = null;
      try {
        // One budget for resolving, connecting and the answer.
        const signal = AbortSignal.timeout(cfg.timeoutMs);
        const url = new URL(d.url);
        const target = await checkWebhookTarget(url, { signal, ...(opts.lookup ? { lookup: opts.lookup } : {}) });
        if (!target.ok) throw new Error(`refused: ${target.reason}`);
        const headers = {
          "content-type": "application/cloudevents+json; charset=utf-8",
          "webhook-id": d.eventId,
          [SIGNATURE_HEADER]: signWebhook(d.secret, body, Math.floor(Date.now() / 1000)),
          "user-agent": "quiesce-webhooks/1",
        };
        const status = await postPinned(url, target.addresses, headers, body, signal);
        if (status < 200 || status >= 300) error = `HTTP ${status}`;
      } catch (e) {
        // The stored error reads the same whatever the cause (refused address, closed port, silence, not
        // HTTP), so dead letters cannot map a network; the cause goes to the server log only.
        error = DELIVERY_FAILED;
        logger("webhook-worker").warn(
          { delivery: d.id.toString(), endpoint: endpointOf(d.url), cause: causeOf(e) },
          "webhook delivery failed",
        );
      }
      if (error === null) await markDelivered(SYSTEM, d.id);
      else
        await markFailed(SYSTEM, d.id, d.attempts, error, retryDelayMs(d.attempts + 1, cfg.retryBaseMs, cfg.retryMaxMs), cfg.maxAttempts);
    }),
  );
  return due.length;
}

/** Runs until `signal` aborts: a pass, then a short sleep when there was nothing to do. */
export async function runWebhookWorker(
  signal: AbortSignal,
  opts: WebhookWorkerOptions = {},
  onError: (e: unknown) => void = () => {},
): Promise<void> {
  const pollMs = opts.pollMs ?? integrationsConfig().webhook.pollMs;
  while (!signal.aborted) {
    let n = 0;
    try {
      n = await deliverDueOnce(opts);
    } catch (e) {
      onError(e);
    }
    // lib/platform/wait's sleep unhooks its listener after every wait (a bare addEventListener here leaked one per idle pass).
    if (n === 0) await sleep(pollMs, undefined, signal);
  }
}
