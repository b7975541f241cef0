// The remote feed's routing, on scripted streams (the transport itself is tested against the real
// server in test/workers/abort-tokens.test.ts): a kill that names several watched runs reaches all of
// them from whichever stream brings it first, once; anything else stays on its own stream.
import { expect, test } from "vitest";
import { sseFeed, type EventSubscriber } from "./sse-feed";
import type { RunEvent } from "../events";
import type { WakeEvent } from "../../abort/control-event";

function scripted() {
  const streams = new Map<string, (e: RunEvent) => void>();
  const sub: EventSubscriber = {
    subscribe: async (runId, onEvent) => {
      streams.set(runId, onEvent);
    },
  };
  return { sub, send: (runId: string, e: RunEvent) => streams.get(runId)!(e) };
}

const kill = { kind: "kill" as const, teamId: "t", rootRunId: "root", runIds: ["root", "child"], barrierId: "bar_1" };

test("a kill arriving on one stream is delivered at once to every watched run it names, and its later copies are not", async () => {
  const { sub, send } = scripted();
  const feed = sseFeed(sub);
  const seen: Record<string, WakeEvent[]> = { root: [], child: [], other: [] };
  for (const id of Object.keys(seen)) await feed.watch(id, (e) => seen[id]!.push(e));

  send("child", { type: "control", data: kill });
  // The root's watchers have it before the root's own stream delivered anything.
  expect(seen.root).toEqual([kill]);
  expect(seen.child).toEqual([kill]);
  expect(seen.other).toEqual([]);
  // The copies on the other streams of the tree change nothing.
  send("root", { type: "control", data: kill });
  send("child", { type: "control", data: kill });
  expect(seen.root).toHaveLength(1);
  expect(seen.child).toHaveLength(1);

  // Not a kill (a wake-up to re-check): only the stream's own run.
  const pause = { kind: "pause" as const, teamId: "t", rootRunId: "root", runIds: ["root", "child"] };
  send("root", { type: "control", data: pause });
  expect(seen.root).toEqual([kill, pause]);
  expect(seen.child).toEqual([kill]);
  // A kill without its run list (a long payload) is a wake-up for its own stream only; resync too.
  const bare = { kind: "kill" as const, teamId: "t", rootRunId: "root" };
  send("other", { type: "control", data: bare });
  send("other", { type: "resync" });
  expect(seen.other).toEqual([bare, { kind: "resync" }]);
  expect(seen.root).toHaveLength(2);
});

test("a kill naming a run on another stream still reaches the stream's own watchers when it names them too; a stopped watch gets nothing", async () => {
  const { sub, send } = scripted();
  const feed = sseFeed(sub);
  const a: WakeEvent[] = [];
  const b: WakeEvent[] = [];
  await feed.watch("root", (e) => a.push(e));
  const stop = await feed.watch("child", (e) => b.push(e));
  stop();
  send("root", { type: "control", data: kill });
  expect(a).toEqual([kill]);
  expect(b).toEqual([]);
});
