// The webhook outbox, written inside the control write's own transaction: the event exists if and only
// if the change committed. One row per subscribed endpoint; delivered by lib/integrations/webhook-worker.
// Internal: the caller has authorized and holds its transaction.
import "server-only";
import { randomUUID } from "node:crypto";
import type { Tx } from "../../platform/db/prisma";
import { sql, toQuery, type Sql } from "../../platform/db/sql";
import { cloudEvent, type EventType } from "./events";

export interface EmitInput {
  teamId: string;
  type: EventType;
  /** The run the event is about: events are delivered in order per run (the ordering key). */
  runId: string;
  subject?: string;
  data: Record<string, unknown>;
}

/**
 * The INSERT … SELECT that writes one event for every enabled endpoint of the team subscribed to its
 * type, with its five parameters numbered from `$n`: [event id, type, ordering key, event JSON, team].
 */
function eventInsertSql(n: number): string {
  const [id, type, key, json, team] = [n, n + 1, n + 2, n + 3, n + 4].map((i) => `$${i}`);
  return `INSERT INTO webhook_deliveries (event_id, endpoint_id, team_id, type, ordering_key, event)
     SELECT ${id}, w.id, w.team_id, ${type}, ${key}, ${json}::jsonb FROM webhook_endpoints w
      WHERE w.team_id = ${team} AND w.enabled AND (${type} = ANY (w.event_types) OR '*' = ANY (w.event_types))
      ORDER BY w.id`;
}

/** The parameters of eventInsertSql for one event. */
function eventParams(e: EmitInput): [string, string, string, string, string] {
  const id = randomUUID();
  const event = cloudEvent({
    id,
    teamId: e.teamId,
    type: e.type,
    subject: e.subject ?? e.runId,
    time: new Date(),
    data: { run_id: e.runId, ...e.data },
  });
  return [id, e.type, e.runId, JSON.stringify(event), e.teamId];
}

/** Writes the event for every enabled endpoint of the team that subscribes to its type. */
export async function emitEventTx(tx: Tx, e: EmitInput): Promise<string> {
  const params = eventParams(e);
  await tx.$executeRawUnsafe(eventInsertSql(1), ...params);
  return params[0];
}

/**
 * emitEventTx for many events in one statement (the barrier engine's receipts, docs/fleet-stop.md#at-scale):
 * each event for every enabled endpoint of its team that subscribes to its type, in the order given.
 */
export async function emitEventsTx(tx: Tx, events: EmitInput[]): Promise<void> {
  if (events.length === 0) return;
  const { text, values } = toQuery(eventsInsertSql(events));
  await tx.$executeRawUnsafe(text, ...values);
}

/**
 * The INSERT … SELECT of emitEventsTx as a fragment, for a statement of the caller's on the raw pool (the
 * kill folds its events into its dispatch-stop statement); `events` must not be empty.
 */
export function eventsInsertSql(events: EmitInput[]): Sql {
  const rows = events.map(eventParams);
  const [id, type, key, json, team] = [0, 1, 2, 3, 4].map((i) => rows.map((r) => r[i]!));
  return sql`INSERT INTO webhook_deliveries (event_id, endpoint_id, team_id, type, ordering_key, event)
     SELECT e.id, w.id, w.team_id, e.type, e.key, e.json::jsonb
       FROM unnest(${id}::text[], ${type}::text[], ${key}::text[], ${json}::text[], ${team}::text[]) WITH ORDINALITY AS e(id, type, key, json, team, n)
       JOIN webhook_endpoints w ON w.team_id = e.team AND w.enabled AND (e.type = ANY (w.event_types) OR '*' = ANY (w.event_types))
      ORDER BY e.n, w.id`;
}
