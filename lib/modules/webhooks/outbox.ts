// The webhook worker's side of the outbox (lib/integrations/webhook-worker): system principals only.
// A delivery is claimed by pushing its next_attempt_at past the send timeout (a lease), so two workers
// never send the same row at once, and a worker that dies mid-send leaves it to be sent again later.
import "server-only";
import { prisma } from "../../platform/db/prisma";
import { forbidden } from "../../platform/errors";
import type { Principal } from "../../platform/auth/principal";

function systemOnly(p: Principal): void {
  if (p.type !== "system") throw forbidden("the webhook outbox is worked by the system only");
}

export interface DueDelivery {
  id: bigint;
  eventId: string;
  event: unknown;
  attempts: number;
  url: string;
  secret: string;
}

/**
 * Claims due deliveries, at most one per (endpoint, run) — the oldest pending one — so events of a
 * run reach an endpoint in the order they were written; different runs and endpoints go in parallel.
 */
export async function claimDueDeliveries(
  p: Principal,
  limit: number,
  leaseMs: number,
  teamId: string | null = null,
): Promise<DueDelivery[]> {
  systemOnly(p);
  return prisma().$queryRawUnsafe<DueDelivery[]>(
    `WITH heads AS (
       SELECT DISTINCT ON (endpoint_id, ordering_key) id, next_attempt_at
         FROM webhook_deliveries WHERE status = 'pending' AND ($3::text IS NULL OR team_id = $3)
        ORDER BY endpoint_id, ordering_key, id),
     due AS (SELECT id FROM heads WHERE next_attempt_at <= clock_timestamp() ORDER BY id LIMIT $1)
     UPDATE webhook_deliveries d SET next_attempt_at = clock_timestamp() + make_interval(secs => $2::double precision / 1000)
       FROM due, webhook_endpoints e
      WHERE d.id = due.id AND e.id = d.endpoint_id AND d.status = 'pending' AND d.next_attempt_at <= clock_timestamp()
     RETURNING d.id, d.event_id AS "eventId", d.event, d.attempts, e.url, e.secret`,
    limit,
    leaseMs,
    teamId,
  );
}

export async function markDelivered(p: Principal, id: bigint): Promise<void> {
  systemOnly(p);
  await prisma().webhookDelivery.update({
    where: { id },
    data: { status: "delivered", deliveredAt: new Date(), attempts: { increment: 1 }, lastError: null },
  });
}

/** A failed attempt: back off, or dead-letter once `maxAttempts` are used. */
export async function markFailed(
  p: Principal,
  id: bigint,
  attempts: number,
  error: string,
  retryInMs: number,
  maxAttempts: number,
): Promise<void> {
  systemOnly(p);
  const n = attempts + 1;
  await prisma().webhookDelivery.update({
    where: { id },
    data:
      n >= maxAttempts
        ? { status: "dead", attempts: n, lastError: error.slice(0, 1000) }
        : { attempts: n, lastError: error.slice(0, 1000), nextAttemptAt: new Date(Date.now() + retryInMs) },
  });
}
