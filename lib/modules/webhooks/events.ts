// Stop events as CloudEvents 1.0 (structured JSON) and the webhook signature over them. Pure.
import { createHmac, timingSafeEqual } from "node:crypto";

import { EVENT_TYPES, type EventType } from "../../schemas/event-types";
import { backoffDelay } from "../../platform/wait";
import { hostOf, isSelf, localhostAddresses } from "../../platform/security/outbound";

export { EVENT_TYPES, type EventType };

/** The CloudEvents `type` of a stop event: reverse-DNS prefixed, e.g. dev.quiesce.run.killed. */
export const ceType = (t: EventType) => `dev.quiesce.${t}`;

export interface CloudEvent {
  specversion: "1.0";
  id: string;
  source: string;
  type: string;
  subject: string;
  time: string;
  datacontenttype: "application/json";
  data: Record<string, unknown>;
}

export function cloudEvent(i: {
  id: string;
  teamId: string;
  type: EventType;
  subject: string;
  time: Date;
  data: Record<string, unknown>;
}): CloudEvent {
  return {
    specversion: "1.0",
    id: i.id,
    source: `/quiesce/teams/${i.teamId}`,
    type: ceType(i.type),
    subject: i.subject,
    time: i.time.toISOString(),
    datacontenttype: "application/json",
    data: i.data,
  };
}

export const SIGNATURE_HEADER = "quiesce-signature";

/** `t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>`: the timestamp is signed with the body. */
export function signWebhook(secret: string, body: string, unixSeconds: number): string {
  const mac = createHmac("sha256", secret).update(`${unixSeconds}.${body}`).digest("hex");
  return `t=${unixSeconds},v1=${mac}`;
}

/** The receiver's check: the signature matches and the timestamp is within `toleranceSeconds` of now. */
export function verifyWebhookSignature(
  secret: string,
  body: string,
  header: string | null,
  nowSeconds: number,
  toleranceSeconds = 300,
): boolean {
  const m = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(header ?? "");
  if (!m) return false;
  const t = Number(m[1]);
  if (Math.abs(nowSeconds - t) > toleranceSeconds) return false;
  const want = Buffer.from(signWebhook(secret, body, t).slice(-64), "hex");
  return timingSafeEqual(want, Buffer.from(m[2]!, "hex"));
}

/** Exponential backoff with a cap: attempt 1 failed → base, then ×2 each time. */
export function retryDelayMs(attempts: number, baseMs: number, maxMs: number): number {
  // The one backoff schedule (lib/platform/wait), counted from the first attempt.
  return backoffDelay(attempts - 1, { baseMs, capMs: maxMs });
}

/**
 * Why a webhook URL is refused before any name is resolved, or null: only http(s), no credentials in
 * it, and never this deployment itself (an event loop through our own API) however its address is spelt
 * (`[::ffff:127.0.0.1]`, `localhost.`, `[::]`). `selfOrigins` are the deployment's origins. Where the
 * host's addresses may go is decided after resolution (lib/modules/webhooks/target.ts).
 */
export function refuseEndpointUrl(text: string, selfOrigins: readonly string[]): string | null {
  let u: URL;
  try {
    u = new URL(text);
  } catch {
    return "not a URL";
  }
  if (u.protocol !== "http:" && u.protocol !== "https:")
    return `only http and https endpoints are allowed, not ${u.protocol.replace(/:$/, "")}`;
  if (u.username || u.password) return "credentials in the URL are not allowed (the HMAC secret authenticates us)";
  const host = hostOf(u);
  const known = host.kind === "ip" ? [host.address] : (localhostAddresses(host.name) ?? []);
  if (isSelf(u, known, { origins: selfOrigins, localAddresses: [] })) return "the endpoint points at this deployment itself";
  return null;
}
