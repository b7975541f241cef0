// What a benchmark section is; bench/run.ts runs each and writes its tables into docs/benchmarks.md.
import { pathToFileURL } from "node:url";
import type { BenchTable } from "./report";

export interface BenchContext {
  url: string;
  server: string;
  iterations: number;
  warmup: number;
  concurrencies: number[];
  /** --fleet-runs: the fleet section's size (root runs), when given. */
  fleetRuns?: number;
  /** --runs: the runs-list section's size (runs of the measured team), when given. */
  runs?: number;
  log(line: string): void;
  /** Section-specific flags (bench/run.ts). */
  options?: { memorySoak?: boolean; memorySoakMinutes?: number; memoryRestSeconds?: number; fleetNoSingle?: boolean };
}

export interface BenchSection {
  name: string;
  title: string;
  run(ctx: BenchContext): Promise<{ tables: BenchTable[]; data: unknown }>;
}

/**
 * Runs a section's bench on its own fresh database when its file is the process's entry point
 * (`tsx bench/<name>.ts [--<flag> n]`), printing its tables; a no-op when the file is imported.
 */
export async function runStandalone(
  moduleUrl: string,
  flag: string,
  fallback: number,
  run: (ctx: { log: (l: string) => void }, n: number) => Promise<{ tables: BenchTable[] }>,
): Promise<void> {
  if (!process.argv[1] || moduleUrl !== pathToFileURL(process.argv[1]).href) return;
  const { freshDatabase } = await import("./fresh-database");
  const { markdown } = await import("./report");
  const at = process.argv.indexOf(`--${flag}`);
  const n = at > 0 ? Number(process.argv[at + 1]) : fallback;
  const log = (l: string) => console.error(`[bench] ${l}`);
  const db = await freshDatabase(log);
  process.env.DATABASE_URL = db.url;
  try {
    const { tables } = await run({ log }, n);
    console.log(tables.map(markdown).join("\n\n"));
  } finally {
    const { prisma } = await import("../../lib/platform/db/prisma");
    const { closePool } = await import("../../lib/platform/db/pool");
    await prisma().$disconnect();
    await closePool();
    await db.drop();
  }
  process.exit(0);
}
