// The remote feed: wake-ups from GET /api/v1/runs/{runId}/events. One stream per run per process,
// shared by every abort token and hold of that run, closed when the last watcher leaves.
//
// A kill event is handed at once to the watchers of every run it names that this process watches,
// whichever stream brought it first. The server sends one notification to every stream of the tree
// (they all subscribe by the root), so a killed tree of 10 runs arrives as 10 copies; handled one
// stream at a time, each copy waited behind the work the previous copies set off (every aborted
// handler reports its outcome over HTTP), which delayed the last handlers behind the first
// (docs/design/abort-on-kill-notification.md). A kill naming the run is authority enough to abort it (lib/agent/abort/control-event.ts
// killNames: terminal, fail closed) and the stream it came on is authenticated for the team, so
// passing it to the named runs' watchers changes nothing but the time. Later copies of the same
// kill are not delivered again.
import type { ControlFeed } from "../../abort/tokens";
import type { WakeEvent } from "../../abort/control-event";
import type { RunEvent } from "../events";
import { joinShared } from "../../abort/join";

/** QuiesceClient satisfies this. */
export interface EventSubscriber {
  subscribe(runId: string, onEvent: (e: RunEvent) => void, signal: AbortSignal): Promise<void>;
}

interface Shared {
  watchers: Set<(e: WakeEvent) => void>;
  ctrl: AbortController;
  ready: Promise<void>;
  /** Kill events already delivered to this run's watchers (the same kill arrives on every stream of the tree). */
  kills: Set<string>;
}

/** Copies of one notification on different streams are equal field by field. */
function killKey(e: WakeEvent): string | null {
  if (e.kind !== "kill" || !e.runIds?.length) return null;
  return JSON.stringify([e.teamId, e.rootRunId, e.barrierId ?? null, e.runIds]);
}

export function sseFeed(client: EventSubscriber): ControlFeed {
  const streams = new Map<string, Shared>();
  const deliver = (s: Shared, wake: WakeEvent, key: string | null) => {
    if (key !== null) {
      if (s.kills.has(key)) return;
      // Bounded: a run is killed once; a long-lived stream may see a few kills of other runs of its tree.
      if (s.kills.size >= 64) s.kills.clear();
      s.kills.add(key);
    }
    for (const w of [...s.watchers]) w(wake);
  };
  return {
    async watch(runId, onWake) {
      let s = streams.get(runId);
      if (!s) {
        const ctrl = new AbortController();
        const watchers = new Set<(e: WakeEvent) => void>();
        const fresh: Shared = {
          watchers,
          ctrl,
          kills: new Set(),
          ready: client.subscribe(
            runId,
            (e) => {
              const wake: WakeEvent | null = e.type === "control" ? e.data : e.type === "resync" ? { kind: "resync" } : null;
              if (!wake) return;
              const key = killKey(wake);
              if (key !== null && wake.kind === "kill") {
                // Every watched run the kill names, this stream's own run among them when named.
                for (const named of new Set(wake.runIds)) {
                  const other = streams.get(named);
                  if (other) deliver(other, wake, key);
                }
                if (wake.runIds?.includes(runId)) return;
              }
              deliver(fresh, wake, key);
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
      await joinShared(shared.watchers, onWake, shared.ready);
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
