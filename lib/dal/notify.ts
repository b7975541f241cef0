// Control changes are announced on one PostgreSQL channel, inside the writing transaction, so the
// notification is delivered exactly when (and only if) the change commits. Abort tokens, the
// console's live views and the barrier engine LISTEN here instead of polling.
import "server-only";
import type { Tx } from "../db/prisma";
import { CONTROL_CHANNEL, type ControlEvent } from "../schemas/control-event";

export { CONTROL_CHANNEL, type ControlEvent };

/** The notification's text: pg_notify payloads are limited to 8000 bytes; big trees send only the root. */
export function controlPayload(event: ControlEvent): string {
  const payload = JSON.stringify(event);
  return payload.length > 7000 ? JSON.stringify({ ...event, runIds: undefined }) : payload;
}

export async function notifyControl(tx: Tx, event: ControlEvent): Promise<void> {
  await tx.$executeRawUnsafe("SELECT pg_notify($1, $2)", CONTROL_CHANNEL, controlPayload(event));
}
