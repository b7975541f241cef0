// The process-wide control listener: one LISTEN connection (lib/platform/db/listen.ts) shared by every abort
// token and SSE stream in this process.
import "server-only";
import { ControlListener } from "../../../platform/db/listen";
import { lineLogger } from "../../../platform/log";

export { ControlListener, type ListenerOptions, type ListenKey, type WakeHandler } from "../../../platform/db/listen";

const g = globalThis as unknown as { quiesceControlListener?: ControlListener };

/** The process-wide listener (one connection, shared by every token and SSE stream). */
export function controlListener(): ControlListener {
  if (!g.quiesceControlListener) g.quiesceControlListener = new ControlListener({ log: lineLogger("listen", "warn") });
  return g.quiesceControlListener;
}

export async function closeControlListener(): Promise<void> {
  const l = g.quiesceControlListener;
  g.quiesceControlListener = undefined;
  await l?.close();
}
