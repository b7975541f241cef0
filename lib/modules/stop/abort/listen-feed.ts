// The in-process feed: wake-ups for a run's tree from this process's shared LISTEN connection.
// Notifications are keyed by the tree's root run, so the feed needs each run's root once (a run's
// root never changes, so it is cached for the life of the process).
import "server-only";
import type { ControlFeed } from "../../../agent/abort/tokens";
import { controlListener, type ControlListener } from "./listener";

export interface ListenFeedOptions {
  /** Where a run's root comes from (the SDK's getRun, or the data-access layer in the web app). */
  resolveRoot: (runId: string) => Promise<string>;
  listener?: ControlListener;
}

export function listenFeed(opts: ListenFeedOptions): ControlFeed {
  const roots = new Map<string, Promise<string>>();
  const rootOf = (runId: string) => {
    let p = roots.get(runId);
    if (!p) {
      p = opts.resolveRoot(runId);
      roots.set(runId, p);
      p.catch(() => roots.delete(runId));
    }
    return p;
  };
  return {
    async watch(runId, onWake) {
      const root = await rootOf(runId);
      return (opts.listener ?? controlListener()).subscribe(root, onWake);
    },
  };
}
