// What a benchmark section is; bench/run.ts runs each and writes its tables into docs/benchmarks.md.
import type { BenchTable } from "./report";

export interface BenchContext {
  url: string;
  server: string;
  iterations: number;
  warmup: number;
  concurrencies: number[];
  /** --fleet-runs: the fleet section's size (root runs), when given. */
  fleetRuns?: number;
  log(line: string): void;
  /** Section-specific flags (bench/run.ts). */
  options?: { memorySoak?: boolean; memorySoakMinutes?: number; memoryRestSeconds?: number; fleetNoSingle?: boolean };
}

export interface BenchSection {
  name: string;
  title: string;
  run(ctx: BenchContext): Promise<{ tables: BenchTable[]; data: unknown }>;
}
