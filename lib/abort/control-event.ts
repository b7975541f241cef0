// The control event's schema and types live in lib/schemas/control-event.ts (one definition); this
// module adds what abort tokens decide from it.
import type { WakeEvent } from "../schemas/control-event";

export { CONTROL_EVENT_KINDS, ControlEventSchema, parseControlEvent } from "../schemas/control-event";
export type { ControlEvent, ResyncEvent, WakeEvent } from "../schemas/control-event";

/** Kinds after which the authority of a running operation may have changed. */
export function mayChangeAuthority(e: WakeEvent): boolean {
  return e.kind !== "settlement" && e.kind !== "receipt";
}
