// The control event's schema and types live in lib/schemas/control-event.ts (one definition); this
// module adds what abort tokens decide from it.
import type { WakeEvent } from "../../schemas/control-event";

export { CONTROL_EVENT_KINDS, ControlEventSchema, parseControlEvent, teamListenKey } from "../../schemas/control-event";
export type { ControlEvent, ResyncEvent, WakeEvent } from "../../schemas/control-event";

/**
 * A kill is terminal (lib/control/lifecycle.ts): a kill notification that names the run — the killed
 * run and its descendants (lib/modules/stop/kill.ts), or the targets of a kill scope (lib/modules/stop/stops.ts) — stays
 * true for good, so it is authority enough to abort the run's operations at once, without the
 * re-check round trip. It only ever stops work (fail closed), and it comes from the same place a
 * heartbeat answer would: this process's PostgreSQL session, or the control plane's authenticated
 * event stream. Everything else (and a kill whose run list was left out of a long payload) is only a
 * wake-up, re-checked through the heartbeat before anything is aborted.
 */
export function killNames(e: WakeEvent, runId: string): boolean {
  return e.kind === "kill" && (e.runIds?.includes(runId) ?? false);
}

/** Kinds after which the authority of a running operation may have changed. */
export function mayChangeAuthority(e: WakeEvent): boolean {
  return e.kind !== "settlement" && e.kind !== "receipt";
}
