// `npm run bench [-- --only gate] [--iterations 2000] [--warmup 200] [--concurrency 1,16] [--fleet-runs 10000] [--fleet-no-single] [--runs 100000] [--write-docs]`
//   memory section: [--memory-rest 90 (seconds)] [--memory-soak [--memory-soak-minutes 10]]
// Runs each registered section on a fresh, migrated database of its own and prints Markdown tables.
// Figures are reported, never asserted: speed belongs here, not in tests (docs/architecture.md#evidence-that-it-works).
// Add a section: write bench/<name>.ts exporting a BenchSection, and add it to SECTIONS below.
import path from "node:path";
import { parseArgs } from "node:util";
import { freshDatabase } from "./lib/fresh-database";
import { markdown, saveResult, writeIntoDocs } from "./lib/report";
import { gateSection } from "./gate";
import { gateBatchOfOneSection } from "./gate-batch-of-one";
import { killSection } from "./kill";
import { abortSection } from "./abort";
import { execSection } from "./exec";
import { hookSection } from "./hook";
import { httpSection } from "./http";
import { fleetSection } from "./fleet";
import { runsListSection } from "./runs-list";
import { memorySection } from "./memory";
import { fairShareSection } from "./fair-share";
import { closeDbClients } from "../lib/start/database";
import type { BenchSection } from "./lib/section";

export type { BenchContext, BenchSection } from "./lib/section";

const SECTIONS: BenchSection[] = [
  gateSection,
  gateBatchOfOneSection,
  httpSection,
  killSection,
  abortSection,
  execSection,
  hookSection,
  fleetSection,
  runsListSection,
  memorySection,
  fairShareSection,
];

const ROOT = path.resolve(import.meta.dirname, "..");

function fail(message: string): never {
  console.error(`bench: ${message}`);
  process.exit(2);
}

async function main() {
  let values;
  try {
    ({ values } = parseArgs({
      options: {
        only: { type: "string" },
        iterations: { type: "string", default: "2000" },
        warmup: { type: "string", default: "200" },
        concurrency: { type: "string", default: "1,16" },
        "fleet-runs": { type: "string" },
        runs: { type: "string" },
        "fleet-no-single": { type: "boolean" },
        "write-docs": { type: "boolean" },
        "memory-rest": { type: "string", default: "90" },
        "memory-soak": { type: "boolean" },
        "memory-soak-minutes": { type: "string", default: "10" },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (e) {
    fail((e as Error).message);
  }
  const iterations = Number(values.iterations);
  const warmup = Number(values.warmup);
  if (!Number.isInteger(iterations) || iterations < 10) fail(`--iterations: a whole number ≥ 10, got "${values.iterations}"`);
  if (!Number.isInteger(warmup) || warmup < 0) fail(`--warmup: a whole number ≥ 0, got "${values.warmup}"`);
  const fleetRuns = values["fleet-runs"] === undefined ? undefined : Number(values["fleet-runs"]);
  if (fleetRuns !== undefined && (!Number.isInteger(fleetRuns) || fleetRuns < 1 || fleetRuns > 100_000))
    fail(`--fleet-runs: a whole number 1–100 000, got "${values["fleet-runs"]}"`);
  const runs = values.runs === undefined ? undefined : Number(values.runs);
  if (runs !== undefined && (!Number.isInteger(runs) || runs < 1000 || runs > 1_000_000))
    fail(`--runs: a whole number 1 000–1 000 000, got "${values.runs}"`);
  const concurrencies = values.concurrency!.split(",").map((s) => Number(s.trim()));
  if (concurrencies.some((c) => !Number.isInteger(c) || c < 1 || c > 256))
    fail(`--concurrency: comma-separated whole numbers 1–256, got "${values.concurrency}"`);
  const memoryRestSeconds = Number(values["memory-rest"]);
  const memorySoakMinutes = Number(values["memory-soak-minutes"]);
  if (!Number.isInteger(memoryRestSeconds) || memoryRestSeconds < 0)
    fail(`--memory-rest: whole seconds ≥ 0, got "${values["memory-rest"]}"`);
  if (!Number.isInteger(memorySoakMinutes) || memorySoakMinutes < 4)
    fail(`--memory-soak-minutes: whole minutes ≥ 4 (the growth is read over the last 3), got "${values["memory-soak-minutes"]}"`);
  const only = values.only?.split(",");
  const unknown = only?.filter((n) => !SECTIONS.some((s) => s.name === n));
  if (unknown?.length) fail(`--only: unknown section(s) ${unknown.join(", ")} (have: ${SECTIONS.map((s) => s.name).join(", ")})`);
  const chosen = SECTIONS.filter((s) => !only || only.includes(s.name));

  // Enough connections for the widest concurrency, for code that uses the shared pool.
  process.env.QUIESCE_DB_POOL ??= String(Math.max(...concurrencies) + 4);
  const log = (line: string) => console.error(`[bench] ${line}`);
  let failed = false;
  for (const section of chosen) {
    const db = await freshDatabase(log);
    // Fixture code (lib/modules) reads DATABASE_URL when it first connects: point it at this database.
    const savedUrl = process.env.DATABASE_URL;
    process.env.DATABASE_URL = db.url;
    try {
      log(`${section.name}: ${section.title}`);
      const { tables, data } = await section.run({
        url: db.url,
        server: db.server,
        iterations,
        warmup,
        concurrencies,
        log,
        fleetRuns,
        runs,
        options: {
          memorySoak: values["memory-soak"] ?? false,
          memorySoakMinutes,
          memoryRestSeconds,
          fleetNoSingle: values["fleet-no-single"] ?? false,
        },
      });
      const md = tables.map(markdown).join("\n\n");
      console.log(`\n${md}\n`);
      const file = saveResult(
        path.join(ROOT, "bench/results"),
        section.name,
        { at: new Date().toISOString(), iterations, warmup, concurrencies, data },
        md,
      );
      log(`saved ${path.relative(ROOT, file)}`);
      if (values["write-docs"]) {
        const ok = writeIntoDocs(path.join(ROOT, "docs", "benchmarks.md"), section.name, md);
        log(ok ? `updated docs/benchmarks.md (${section.name})` : `docs/benchmarks.md has no markers for ${section.name}; not written`);
      }
    } catch (e) {
      failed = true;
      console.error(`bench: section ${section.name} failed: ${(e as Error).stack ?? e}`);
    } finally {
      // Each section gets its own database: end the process-wide Prisma client and pool in between.
      await closeDbClients();
      process.env.DATABASE_URL = savedUrl;
      if (savedUrl === undefined) delete process.env.DATABASE_URL;
      await db.drop();
    }
  }
  process.exit(failed ? 1 : 0);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
