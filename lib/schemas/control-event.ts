// The control event: one definition of the notification every control change announces on the
// `quiesce_control` PostgreSQL channel (lib/platform/db/notify.ts writes it inside the writing transaction;
// the LISTEN client, abort tokens, the SSE streams and the SDK read it). Parsed with zod wherever it
// arrives: a notification is only a wake-up call, never an authority — whoever receives one re-checks
// the durable state before acting. zod/mini (the same validation core): the SDK carries this schema
// into the bundled Claude Code hook, whose start-up is paid on every tool call.
import * as z from "zod/mini";

export const CONTROL_CHANNEL = "quiesce_control";

export const CONTROL_EVENT_KINDS = [
  "pause",
  "resume",
  "kill",
  "epoch",
  "breaker",
  "barrier",
  "settlement",
  "receipt",
  "run",
  "scope",
  "approval",
] as const;

/**
 * A `scope` event (a fleet stop committed or lifted, docs/fleet-stop.md) concerns every run of its team,
 * so it is addressed to the team: its rootRunId is this key, which a run's event stream listens on too.
 */
export function teamListenKey(teamId: string): string {
  return `team:${teamId}`;
}

export const ControlEventSchema = z.object({
  kind: z.enum(CONTROL_EVENT_KINDS),
  teamId: z.string().check(z.minLength(1)),
  rootRunId: z.string().check(z.minLength(1)),
  runIds: z.optional(z.array(z.string())),
  barrierId: z.optional(z.string()),
});
export type ControlEvent = z.infer<typeof ControlEventSchema>;

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
