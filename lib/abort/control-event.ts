// The wire form of a control notification (lib/dal/notify.ts writes it with pg_notify, the events
// route forwards it as SSE). Parsed with zod at every boundary: a notification is only a wake-up
// call, never an authority — whoever receives one re-checks the durable state before acting.
import { z } from "zod";
import type { ControlEvent } from "../dal/notify";

export const CONTROL_EVENT_KINDS = ["pause", "resume", "kill", "epoch", "breaker", "barrier", "settlement", "receipt", "run"] as const;

export const ControlEventSchema = z.object({
  kind: z.enum(CONTROL_EVENT_KINDS),
  teamId: z.string().min(1),
  rootRunId: z.string().min(1),
  runIds: z.array(z.string()).optional(),
  barrierId: z.string().optional(),
}) satisfies z.ZodType<ControlEvent>;

/**
 * Emitted locally (never sent by PostgreSQL) after a listener or an SSE stream reconnects:
 * notifications sent while it was down are lost, so every subscriber must re-check.
 */
export type ResyncEvent = { kind: "resync"; rootRunId?: string };
export type WakeEvent = ControlEvent | ResyncEvent;

export function parseControlEvent(text: string): ControlEvent | null {
  try {
    const parsed = ControlEventSchema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

/** Kinds after which the authority of a running operation may have changed. */
export function mayChangeAuthority(e: WakeEvent): boolean {
  return e.kind !== "settlement" && e.kind !== "receipt";
}
