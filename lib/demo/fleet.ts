// The live demo fleet: simulated release agents (lib/demo/story.ts) started every 20–40 s while
// fewer than `maxLive` are in flight, so a new user finds live run trees at once and can pause or
// kill them and read the receipts. Finished trees stay as history. Survives the control plane being
// briefly down (log once, back off, continue) and stops cleanly on its signal.
import { QuiesceClient } from "../agent/sdk/client";
import { WorkerGuard, sseFeed } from "../agent/sdk/worker";
import { SimProviderClient } from "../modules/stop";
import { between, Outage, pause } from "./backoff";
import { startDemoQueues } from "./queues";
import { playRelease } from "./story";
import { lineLogger } from "../platform/log";

export interface FleetOptions {
  url: string;
  agentKey: string;
  /** Worker key for the queue workers; defaults to the agent key. */
  workerKey?: string;
  simUrl: string;
  maxLive?: number;
  /** Trees started at once when the fleet starts. */
  initial?: number;
  intervalMs?: [number, number];
  signal: AbortSignal;
  log?: (m: string) => void;
}

export async function runFleet(o: FleetOptions): Promise<void> {
  const log = o.log ?? lineLogger("demo");
  const agent = new QuiesceClient({ url: o.url, apiKey: o.agentKey, timeoutMs: 10_000 });
  const worker = new QuiesceClient({ url: o.url, apiKey: o.workerKey ?? o.agentKey, timeoutMs: 10_000 });
  const outage = new Outage(log);
  const queues = await startDemoQueues({ agent, worker, log, stop: o.signal });
  const agentGuard = new WorkerGuard({ client: agent, feed: sseFeed(agent), holdRecheckMs: 15_000, holdMaxMs: 24 * 3600_000, log });
  const ctx = { agent, agentGuard, queues, sim: new SimProviderClient(o.simUrl), outage, signal: o.signal, log };
  const live = new Set<Promise<unknown>>();
  const launch = () => {
    const p = playRelease(ctx).catch((err: Error) => {
      if (!o.signal.aborted) log(`release agent stopped: ${err.message}`);
    });
    live.add(p);
    void p.finally(() => live.delete(p));
  };
  const [lo, hi] = o.intervalMs ?? [20_000, 40_000];
  log(
    `fleet started against ${o.url} (provider ${o.simUrl}); a new release run every ${lo / 1000}–${hi / 1000} s, at most ${o.maxLive ?? 4} live`,
  );
  for (let i = 0; i < (o.initial ?? 2); i++) launch();
  while (!o.signal.aborted) {
    await pause(between(lo, hi), o.signal);
    if (!o.signal.aborted && live.size < (o.maxLive ?? 4)) launch();
  }
  log("stopping: waiting for agents to finish their current step");
  // 5 s, so the whole stop (agents, then the queues) fits inside npm start's 10 s grace before SIGKILL.
  await Promise.race([Promise.allSettled([...live]), pause(5_000)]);
  await queues.stop();
}
