// Latency and throughput of one operation at a given concurrency: `concurrency` workers, each on its
// own connection, take iterations from a shared counter until `iterations` are done. Warm-up calls
// (prepared statements, caches) are not counted.
import { performance } from "node:perf_hooks";

export interface Stats {
  name: string;
  concurrency: number;
  count: number;
  p50: number;
  p99: number;
  mean: number;
  perSecond: number;
}

export type Op = () => Promise<void>;

export function percentile(sortedMs: number[], p: number): number {
  if (sortedMs.length === 0) return NaN;
  const i = Math.min(sortedMs.length - 1, Math.max(0, Math.ceil((p / 100) * sortedMs.length) - 1));
  return sortedMs[i]!;
}

/** `ops[i]` is worker i's operation (bound to its own connection). */
export async function measure(name: string, ops: Op[], iterations: number, warmup: number): Promise<Stats> {
  for (const op of ops) for (let i = 0; i < Math.ceil(warmup / ops.length); i++) await op();
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    ops.map(async (op) => {
      while (next < iterations) {
        next++;
        const t0 = performance.now();
        await op();
        latencies.push(performance.now() - t0);
      }
    }),
  );
  const wall = performance.now() - started;
  return summarize(name, ops.length, latencies, wall);
}

/** Each measure's latencies and wall time, kept out of the Stats themselves (they are written to the report's data). */
const samples = new WeakMap<Stats, { latencies: number[]; wall: number }>();

/** Stats of one measure from its latencies (ms) and wall time (ms); kept for pooled(). */
export function summarize(name: string, concurrency: number, latencies: number[], wall: number): Stats {
  latencies.sort((a, b) => a - b);
  const stats = {
    name,
    concurrency,
    count: latencies.length,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    mean: latencies.reduce((s, x) => s + x, 0) / latencies.length,
    perSecond: (latencies.length / wall) * 1000,
  };
  samples.set(stats, { latencies, wall });
  return stats;
}

/**
 * Several rounds of one measure (from measure() or summarize()) as one figure: every call's latency
 * pooled, throughput over the rounds' summed wall time. Rounds interleaved with a baseline's (A B B A) see the same drift in machine load.
 */
export function pooled(rounds: Stats[]): Stats {
  const parts = rounds.map((r) => samples.get(r));
  if (rounds.length === 0 || parts.some((p) => p === undefined))
    throw new Error("pooled: every round must come from measure() or summarize()");
  return summarize(
    rounds[0]!.name,
    rounds[0]!.concurrency,
    parts.flatMap((p) => p!.latencies),
    parts.reduce((s, p) => s + p!.wall, 0),
  );
}
