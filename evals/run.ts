// `npm run evals [-- --only a,b] [--list] [--keep-db] [--json]` — the cancellation eval suite
// (docs/architecture.md#evidence-that-it-works, docs/evals.md): every race from the three articles as a real multi-process scenario
// on a fresh database. Prints case · expected · observed · pass, writes evals/reports/<timestamp>.json
// (logs of every process beside it), exits 1 on any mismatch or error, 2 on bad flags.
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import { runCase } from "../lib/drill/index";
import { buildReport, renderEvidence, renderTable, reportFileName } from "../lib/drill/report";
import type { CaseResult } from "../lib/drill/types";
import { EVAL_CASES } from "./cases/index";
import type { EvalCase } from "./cases/types";
import { killAll, ROOT } from "./support/proc";
import { Stack } from "./support/stack";
import { runModelLong } from "./model-long";

const CASE_TIMEOUT_MS = 180_000;

function usage(message: string): never {
  console.error(
    `evals: ${message}\nusage: npm run evals -- [--only case,case] [--list] [--keep-db] [--json]\n       npm run evals -- --long [--model-runs n] [--seed s --path p]   (the model-based test, 10 000 sequences)`,
  );
  process.exit(2);
}

function withTimeout(c: EvalCase, stack: Stack): Promise<CaseResult> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<CaseResult>((resolve) => {
    timer = setTimeout(
      () =>
        resolve({
          name: c.name,
          seed: c.seed,
          expected: c.expected,
          observed: "timeout",
          status: "error",
          checks: [],
          evidence: [],
          facts: {},
          durationMs: CASE_TIMEOUT_MS,
          note: `no result within ${CASE_TIMEOUT_MS / 1000} s`,
        }),
      CASE_TIMEOUT_MS,
    );
  });
  return Promise.race([runCase(c, stack), timeout]).finally(() => clearTimeout(timer));
}

async function main(): Promise<number> {
  // The HA drill has its own entry point (evals/ha.ts): `npm run evals -- --ha` is `npm run evals:ha`.
  if (process.argv.includes("--ha")) {
    const { spawnSync } = await import("node:child_process");
    return (
      spawnSync(process.execPath, ["--conditions=react-server", "--import", "tsx", path.join(ROOT, "evals", "ha.ts")], { stdio: "inherit" })
        .status ?? 1
    );
  }
  let values;
  try {
    ({ values } = parseArgs({
      options: {
        only: { type: "string" },
        list: { type: "boolean" },
        "keep-db": { type: "boolean" },
        json: { type: "boolean" },
        long: { type: "boolean" },
        "model-runs": { type: "string" },
        seed: { type: "string" },
        path: { type: "string" },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (err) {
    usage((err as Error).message);
  }
  if (values.long || values["model-runs"]) {
    const runs = Number(values["model-runs"] ?? 10_000);
    if (!Number.isInteger(runs) || runs < 1) usage("--model-runs: a positive integer");
    const seed = values.seed === undefined ? undefined : Number(values.seed);
    if (seed !== undefined && !Number.isInteger(seed)) usage("--seed: an integer (as fast-check printed it)");
    return runModelLong({ runs, seed, path: values.path, log: (l) => console.error(`[evals] ${l}`) });
  }
  if (values.list) {
    for (const c of EVAL_CASES) console.log(`${c.name.padEnd(44)} → ${c.expected.padEnd(32)} seed ${c.seed}: ${c.summary}`);
    return 0;
  }
  const only = values.only
    ?.split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  const unknown = only?.filter((n) => !EVAL_CASES.some((c) => c.name === n)) ?? [];
  if (unknown.length) usage(`--only: unknown case(s) ${unknown.join(", ")} (see --list)`);
  const cases = only?.length ? EVAL_CASES.filter((c) => only.includes(c.name)) : EVAL_CASES;

  const started = new Date();
  const reportsDir = path.join(ROOT, "evals", "reports");
  const stamp = reportFileName(started).replace(/\.json$/, "");
  const logDir = path.join(reportsDir, `${stamp}-logs`);
  mkdirSync(logDir, { recursive: true });
  const log = (l: string) => console.error(`[evals] ${l}`);

  let stack: Stack | undefined;
  const results: CaseResult[] = [];
  let environment: Record<string, unknown> = {};
  try {
    stack = await Stack.up(logDir, log);
    environment = stack.describe();
    for (const c of cases) {
      const dead = stack.health();
      if (dead) throw new Error(`a shared process died before ${c.name}: ${dead}`);
      log(`${c.name} …`);
      const r = await withTimeout(c, stack);
      log(`${c.name}: ${r.status} — observed ${r.observed} (${(r.durationMs / 1000).toFixed(1)} s)${r.note ? ` — ${r.note}` : ""}`);
      results.push(r);
    }
  } catch (err) {
    log(`the eval stack failed: ${(err as Error).stack ?? err}`);
    environment = { ...environment, stackError: (err as Error).message };
    for (const c of cases.filter((x) => !results.some((r) => r.name === x.name))) {
      results.push({
        name: c.name,
        seed: c.seed,
        expected: c.expected,
        observed: "not run",
        status: "error",
        checks: [],
        evidence: [],
        facts: {},
        durationMs: 0,
        note: "the eval stack failed; see the logs",
      });
    }
  } finally {
    await stack?.down(values["keep-db"]).catch((e) => log(`teardown: ${(e as Error).message}`));
  }

  const report = buildReport("evals", started, new Date(), environment, results);
  const file = path.join(reportsDir, reportFileName(started));
  writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
  if (values.json) {
    console.log(JSON.stringify(report, null, 2));
  } else {
    console.log(`\n${renderTable(results)}`);
    const ev = renderEvidence(results);
    if (ev) console.log(`\nevidence (valid while the eval stack ran):\n${ev}`);
    console.log(
      `\nweb app: ${String((environment.webApp as { kind?: string } | undefined)?.kind ?? "?")}; report: ${path.relative(ROOT, file)}; logs: ${path.relative(ROOT, logDir)}/ (${(report.durationMs / 1000).toFixed(0)} s)`,
    );
  }
  return report.summary.ok ? 0 : 1;
}

process.on("exit", killAll);
for (const sig of ["SIGINT", "SIGTERM"] as const)
  process.once(sig, () => {
    killAll();
    process.exit(130);
  });

main().then(
  (code) => {
    process.exitCode = code;
    // Nothing of ours may keep the process alive (a stray socket, a timer of a client library).
    setTimeout(() => process.exit(code), 2000).unref();
  },
  (err) => {
    console.error(err);
    killAll();
    process.exit(1);
  },
);
