// The webhook outbox, written inside the control write's own transaction: the event exists if and only
// if the change committed. One row per subscribed endpoint; delivered by lib/integrations/webhook-worker.
// Internal: the caller has authorized and holds its transaction.
import "server-only";
import { randomUUID } from "node:crypto";
import type { Tx } from "../../db/prisma";
import { cloudEvent, type EventType } from "../../integrations/events";

export interface EmitInput {
  teamId: string;
  type: EventType;
  /** The run the event is about: events are delivered in order per run (the ordering key). */
  runId: string;
  subject?: string;
  data: Record<string, unknown>;
}

/** Writes the event for every enabled endpoint of the team that subscribes to its type. */
export async function emitEventTx(tx: Tx, e: EmitInput): Promise<string> {
  const id = randomUUID();
  const event = cloudEvent({
    id,
    teamId: e.teamId,
    type: e.type,
    subject: e.subject ?? e.runId,
    time: new Date(),
    data: { run_id: e.runId, ...e.data },
  });
  await tx.$executeRawUnsafe(
    `INSERT INTO webhook_deliveries (event_id, endpoint_id, team_id, type, ordering_key, event)
     SELECT $1, w.id, w.team_id, $2, $3, $4::jsonb FROM webhook_endpoints w
      WHERE w.team_id = $5 AND w.enabled AND ($2 = ANY (w.event_types) OR '*' = ANY (w.event_types))
      ORDER BY w.id`,
    id,
    e.type,
    e.runId,
    JSON.stringify(event),
    e.teamId,
  );
  return id;
}
