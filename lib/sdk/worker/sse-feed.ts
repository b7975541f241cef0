// The remote feed: wake-ups from GET /api/v1/runs/{runId}/events. One stream per run per process,
// shared by every abort token and hold of that run, closed when the last watcher leaves.
import type { ControlFeed } from "../../abort/tokens";
import type { WakeEvent } from "../../abort/control-event";
import type { RunEvent } from "../events";

/** QuiesceClient satisfies this. */
export interface EventSubscriber {
  subscribe(runId: string, onEvent: (e: RunEvent) => void, signal: AbortSignal): Promise<void>;
}

interface Shared {
  watchers: Set<(e: WakeEvent) => void>;
  ctrl: AbortController;
  ready: Promise<void>;
}

export function sseFeed(client: EventSubscriber): ControlFeed {
  const streams = new Map<string, Shared>();
  return {
    async watch(runId, onWake) {
      let s = streams.get(runId);
      if (!s) {
        const ctrl = new AbortController();
        const watchers = new Set<(e: WakeEvent) => void>();
        const fresh: Shared = {
          watchers,
          ctrl,
          ready: client.subscribe(
            runId,
            (e) => {
              const wake: WakeEvent | null = e.type === "control" ? e.data : e.type === "resync" ? { kind: "resync" } : null;
              if (wake) for (const w of [...watchers]) w(wake);
            },
            ctrl.signal,
          ),
        };
        s = fresh;
        streams.set(runId, fresh);
        fresh.ready.catch(() => {
          if (streams.get(runId) === fresh) streams.delete(runId);
          ctrl.abort();
        });
      }
      const shared = s;
      shared.watchers.add(onWake);
      try {
        await shared.ready;
      } catch (err) {
        shared.watchers.delete(onWake);
        throw err;
      }
      return () => {
        shared.watchers.delete(onWake);
        if (shared.watchers.size === 0 && streams.get(runId) === shared) {
          streams.delete(runId);
          shared.ctrl.abort();
        }
      };
    },
  };
}
