// Control changes are announced on one PostgreSQL channel, inside the writing transaction, so the
// notification is delivered exactly when (and only if) the change commits. Abort tokens, the
// console's live views and the barrier engine LISTEN here instead of polling.
import "server-only";
import type { Tx } from "./prisma";
import { CONTROL_CHANNEL, type ControlEvent } from "../../schemas/control-event";

export { CONTROL_CHANNEL, type ControlEvent };

export async function notifyControl(tx: Tx, event: ControlEvent): Promise<void> {
  await tx.$executeRawUnsafe("SELECT pg_notify($1, $2)", CONTROL_CHANNEL, controlPayload(event));
}

/** notifyControl for many events in one statement. */
export async function notifyControlMany(tx: Tx, events: ControlEvent[]): Promise<void> {
  if (events.length === 0) return;
  await tx.$executeRawUnsafe("SELECT pg_notify($1, p) FROM unnest($2::text[]) AS p", CONTROL_CHANNEL, events.map(controlPayload));
}

/** The notification's payload, for a statement that calls pg_notify(CONTROL_CHANNEL, payload) itself. */
export function controlPayload(event: ControlEvent): string {
  // pg_notify payloads are limited to 8000 bytes; big trees send only the root.
  const payload = JSON.stringify(event);
  return payload.length > 7000 ? JSON.stringify({ ...event, runIds: undefined }) : payload;
}
