// Delivers the webhook outbox: at least once (a crash after the receiver answered but before the row
// is marked means a second send with the same event id; receivers de-duplicate on it), in order per
// run and endpoint, with exponential backoff and a dead-letter state after the last attempt.
import { claimDueDeliveries, markDelivered, markFailed } from "../dal/webhook-outbox";
import { integrationsConfig } from "./config";
import { sleep } from "../wait";
import { retryDelayMs, signWebhook, SIGNATURE_HEADER } from "./events";

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
        const res = await fetch(d.url, {
          method: "POST",
          redirect: "manual",
          signal: AbortSignal.timeout(cfg.timeoutMs),
          headers: {
            "content-type": "application/cloudevents+json; charset=utf-8",
            "webhook-id": d.eventId,
            [SIGNATURE_HEADER]: signWebhook(d.secret, body, Math.floor(Date.now() / 1000)),
            "user-agent": "quiesce-webhooks/1",
          },
          body,
        });
        await res.body?.cancel().catch(() => {});
        if (res.status < 200 || res.status >= 300) error = `HTTP ${res.status}`;
      } catch (e) {
        error =
          (e as Error).name === "TimeoutError"
            ? `no answer within ${cfg.timeoutMs} ms`
            : `${(e as Error).message}${(e as { cause?: Error }).cause ? `: ${(e as { cause?: Error }).cause!.message}` : ""}`;
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
    // lib/wait's sleep unhooks its listener after every wait (a bare addEventListener here leaked one per idle pass).
    if (n === 0) await sleep(pollMs, undefined, signal);
  }
}
