// Memory of the `npm start` stack (Linux only: read from /proc).
//  - At rest: `npm start` on free ports with an embedded PostgreSQL of its own (a fresh data folder),
//    each process's resident memory --memory-rest seconds (90) after it printed "Quiesce is up", against
//    a bare `node -e` process measured at the same moment. Target: Quiesce's node processes ≤ 400 MB.
//  - --memory-soak: then, on the same stack, gate calls to the API process at 300 decisions/s (autocannon)
//    for --memory-soak-minutes (10): the API and web processes' RSS every 10 s, at the end, and its growth
//    over the last 3 minutes. Target: ≤ 300 MB and no growth.
// The stack is the real one (prebuilt CLI, Next's production build, the demo fleet running): the
// figures are what a user's machine holds. Reported, never asserted.
import os from "node:os";
import path from "node:path";
import { chmodSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { spawn, type ChildProcess } from "node:child_process";
import autocannon from "autocannon";
import type { BenchSection } from "./lib/section";
import { ratio, type BenchTable } from "./lib/report";
import { processTree, rssOf, stackName, type ProcInfo } from "./lib/rss";
import { freePort } from "./lib/processes";
import { sleep } from "../lib/platform/wait";
import { newId } from "../lib/platform/ids";

const ROOT = path.resolve(import.meta.dirname, "..");
const REST_TARGET_MB = 400;
const SOAK_TARGET_MB = 300;
const SOAK_RATE = 300;
const SAMPLE_MS = 10_000;
const SOAK_CONNECTIONS = 64;

const mb = (x: number) => x.toFixed(0);

interface Stack {
  npm: ChildProcess;
  web: number;
  api: number;
  dataDir: string;
  output: () => string;
}

async function startStack(log: (l: string) => void): Promise<Stack> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "quiesce-bench-memory-"));
  chmodSync(dataDir, 0o755); // as root, the embedded server runs as the `postgres` OS user
  const [web, api, pg, sim] = [await freePort(), await freePort(), await freePort(), await freePort()];
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PORT: String(web),
    QUIESCE_API_PORT: String(api),
    QUIESCE_EMBEDDED_PG_PORT: String(pg),
    QUIESCE_PROVIDER_SIM_PORT: String(sim),
    QUIESCE_DATA_DIR: dataDir,
    QUIESCE_LOG_FORMAT: "json",
  };
  delete env.DATABASE_URL; // the zero-config path: the stack hosts its own embedded PostgreSQL
  delete env.QUIESCE_DB_POOL; // the bench raised it for its own sections
  delete env.NODE_OPTIONS;
  log(`npm start (web ${web}, API ${api}, embedded PostgreSQL ${pg}, provider-sim ${sim}, data ${dataDir}) …`);
  const npm = spawn("npm", ["start"], { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  const keep = (b: Buffer) => {
    out = (out + b.toString()).slice(-20_000);
  };
  npm.stdout!.on("data", keep);
  npm.stderr!.on("data", keep);
  const deadline = Date.now() + 15 * 60_000; // a first start may run `next build`
  while (!out.includes("Quiesce is up")) {
    if (npm.exitCode !== null) throw new Error(`npm start exited (${npm.exitCode}):\n${out.slice(-4000)}`);
    if (Date.now() > deadline) throw new Error(`npm start was not up within 15 minutes:\n${out.slice(-4000)}`);
    await sleep(500);
  }
  return { npm, web, api, dataDir, output: () => out };
}

async function stopStack(s: Stack, log: (l: string) => void): Promise<void> {
  const tree = processTree(s.npm.pid!);
  const supervisor = tree.find((p) => stackName(p).startsWith("supervisor") && p.node);
  const exited = new Promise((r) => (s.npm.exitCode !== null ? r(null) : s.npm.once("exit", r)));
  if (supervisor) process.kill(supervisor.pid, "SIGTERM");
  else s.npm.kill("SIGTERM");
  await Promise.race([exited, sleep(45_000)]);
  for (const p of processTree(s.npm.pid!).reverse()) {
    try {
      process.kill(p.pid, "SIGKILL");
      log(`killed ${stackName(p)} (${p.pid}), still running after 45 s`);
    } catch {
      /* gone */
    }
  }
  rmSync(s.dataDir, { recursive: true, force: true });
}

/** A bare Node process (`node -e` with a timer), the floor every process of the stack pays. */
async function bareNode(): Promise<ChildProcess> {
  const child = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"], { stdio: "ignore" });
  await sleep(1500);
  return child;
}

/** Least-squares slope of (t minutes, y) in y-units per minute. */
function slope(points: { t: number; y: number }[]): number {
  const n = points.length;
  if (n < 2) return 0;
  const mt = points.reduce((a, p) => a + p.t, 0) / n;
  const my = points.reduce((a, p) => a + p.y, 0) / n;
  const num = points.reduce((a, p) => a + (p.t - mt) * (p.y - my), 0);
  const den = points.reduce((a, p) => a + (p.t - mt) ** 2, 0);
  return den === 0 ? 0 : num / den;
}

interface SoakResult {
  minutes: number;
  decisions: number;
  perSecond: number;
  non2xx: number;
  errors: number;
  samples: { t: number; api: number | null; web: number | null }[];
}

async function soak(stack: Stack, minutes: number, log: (l: string) => void): Promise<SoakResult> {
  const keys = JSON.parse(readFileSync(path.join(stack.dataDir, "demo-keys.json"), "utf8")) as { keys: { agent: { secret: string } } };
  const auth = { authorization: `Bearer ${keys.keys.agent.secret}`, "content-type": "application/json" };
  const base = `http://127.0.0.1:${stack.api}`;
  const runs: { runId: string; leaseId: string; epoch: number }[] = [];
  for (let i = 0; i < 16; i++) {
    const r = await fetch(`${base}/api/v1/runs`, {
      method: "POST",
      headers: auth,
      body: JSON.stringify({ taskId: `bench-memory-${i}`, leaseTtlSeconds: 3600 }),
    });
    if (r.status !== 201) throw new Error(`POST /api/v1/runs answered ${r.status}: ${await r.text()}`);
    runs.push((await r.json()) as { runId: string; leaseId: string; epoch: number });
  }
  const tree = processTree(stack.npm.pid!);
  const apiPid = tree.find((p) => p.node && stackName(p) === "api")?.pid;
  const webPid = tree.find((p) => p.node && stackName(p).startsWith("web"))?.pid;
  if (!apiPid || !webPid) throw new Error("the API or web process was not found in the stack");
  const started = Date.now();
  const samples: SoakResult["samples"] = [];
  const sample = () => samples.push({ t: (Date.now() - started) / 60_000, api: rssOf(apiPid), web: rssOf(webPid) });
  sample();
  const timer = setInterval(sample, SAMPLE_MS);
  let n = 0;
  log(`soak: ${SOAK_RATE} gate calls/s to the API process for ${minutes} min …`);
  const result = await new Promise<autocannon.Result>((resolve, reject) => {
    autocannon(
      {
        url: `${base}/api/v1/gate`,
        // Enough connections that the offered rate is reached even at 200 ms a call on a loaded machine.
        connections: SOAK_CONNECTIONS,
        pipelining: 1,
        overallRate: SOAK_RATE,
        duration: minutes * 60,
        timeout: 30,
        requests: [
          {
            method: "POST",
            headers: auth,
            setupRequest: (req: autocannon.Request) => {
              const r = runs[n++ % runs.length]!;
              return {
                ...req,
                body: JSON.stringify({ runId: r.runId, leaseId: r.leaseId, epoch: r.epoch, operationId: newId("op"), tool: "bench.noop" }),
              };
            },
          },
        ],
      },
      (err, res) => (err ? reject(err) : resolve(res)),
    );
  });
  clearInterval(timer);
  sample();
  return {
    minutes,
    decisions: result.requests.total,
    perSecond: result.requests.total / (minutes * 60),
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
    samples,
  };
}

export const memorySection: BenchSection = {
  name: "memory",
  title: "Memory of the `npm start` stack",
  async run(ctx) {
    if (process.platform !== "linux") throw new Error("the memory section reads /proc: Linux only");
    const restSeconds = ctx.options?.memoryRestSeconds ?? 90;
    const soakMinutes = ctx.options?.memorySoak ? (ctx.options.memorySoakMinutes ?? 10) : 0;
    const stack = await startStack(ctx.log);
    let rest: ProcInfo[] = [];
    let bare = 0;
    let soakResult: SoakResult | undefined;
    try {
      ctx.log(`up; at rest for ${restSeconds} s …`);
      await sleep(Math.max(0, restSeconds - 1.5) * 1000);
      const baseline = await bareNode();
      rest = processTree(stack.npm.pid!);
      bare = rssOf(baseline.pid!) ?? 0;
      baseline.kill();
      if (soakMinutes > 0) soakResult = await soak(stack, soakMinutes, ctx.log);
    } finally {
      await stopStack(stack, ctx.log);
    }

    const node = rest.filter((p) => p.node);
    const npm = node.filter((p) => stackName(p) === "npm");
    const ours = node.filter((p) => stackName(p) !== "npm");
    const total = ours.reduce((a, p) => a + p.rssMb, 0);
    const other = rest.filter((p) => !p.node && p.rssMb > 3);
    const postgres = other.filter((p) => p.cmdline[0]?.includes("postgres")).reduce((a, p) => a + p.rssMb, 0);
    const rows = ours.map((p) => [stackName(p), mb(p.rssMb), ratio(p.rssMb / bare)]);
    rows.push([`**total (${ours.length} node processes)**`, `**${mb(total)}**`, `**${ratio(total / bare)}**`]);
    for (const p of npm) rows.push(["npm (the `npm start` launcher itself, not counted)", mb(p.rssMb), ratio(p.rssMb / bare)]);
    rows.push(["bare `node -e` (baseline, same moment)", mb(bare), ratio(1)]);
    const tables: BenchTable[] = [
      {
        title: `At rest: resident memory ${restSeconds} s after "Quiesce is up"`,
        columns: ["process", "RSS MB", "÷ bare node"],
        rows,
        notes: [
          `Quiesce's node processes: ${mb(total)} MB → ${total <= REST_TARGET_MB ? "PASS" : "MISS"} (target ≤ ${REST_TARGET_MB} MB)`,
          `not node, not counted: PostgreSQL ${mb(postgres)} MB in ${other.filter((p) => p.cmdline[0]?.includes("postgres")).length} processes` +
            (other.some((p) => !p.cmdline[0]?.includes("postgres"))
              ? `; ${other
                  .filter((p) => !p.cmdline[0]?.includes("postgres"))
                  .map((p) => `${stackName(p)} ${mb(p.rssMb)} MB`)
                  .join(", ")}`
              : ""),
          "RSS counts the pages of the node binary each process has touched (shared between processes) in every process, as `ps` does.",
          `\`npm start\` on free ports, embedded PostgreSQL in a fresh data folder, demo fleet running; Node ${process.version}, ${os.cpus().length} CPUs, load average ${os
            .loadavg()
            .map((l) => l.toFixed(1))
            .join(" ")}.`,
        ],
      },
    ];
    if (soakResult) {
      const s = soakResult;
      const end = s.samples.at(-1)!;
      const windowStart = end.t - 3;
      const last3 = s.samples.filter((x) => x.t >= windowStart);
      const first3 = last3[0]!;
      const row = (name: "api" | "web") => {
        const pts = last3.filter((x) => x[name] !== null).map((x) => ({ t: x.t, y: x[name]! }));
        const max = Math.max(...s.samples.map((x) => x[name] ?? 0));
        const growth = (end[name] ?? 0) - (first3[name] ?? 0);
        return [
          name === "api" ? "API process" : "web (next start)",
          mb(s.samples[0]![name] ?? 0),
          mb(end[name] ?? 0),
          mb(max),
          `${growth >= 0 ? "+" : ""}${mb(growth)}`,
          slope(pts).toFixed(2),
        ];
      };
      const api = row("api");
      const apiEnd = end.api ?? Infinity;
      const apiSlope = Number(api[5]);
      tables.push({
        title: `Soak: ${s.minutes} minutes at ${SOAK_RATE} decisions/s through the API process`,
        columns: [
          "process",
          "RSS MB at start",
          "RSS MB at the end",
          "max MB",
          "growth over the last 3 min (MB)",
          "slope, last 3 min (MB/min)",
        ],
        rows: [api, row("web")],
        notes: [
          `API process after ${s.minutes} min: ${mb(apiEnd)} MB → ${apiEnd <= SOAK_TARGET_MB ? "PASS" : "MISS"} (target ≤ ${SOAK_TARGET_MB} MB); growth over the last 3 minutes ${api[4]} MB, slope ${api[5]} MB/min → ${Math.abs(apiSlope) < 1 ? "no growth" : apiSlope > 0 ? "GROWING" : "shrinking"}`,
          `${s.decisions.toLocaleString("en-US")} gate calls (${s.perSecond.toFixed(0)}/s, offered ${SOAK_RATE}/s by autocannon over ${SOAK_CONNECTIONS} keep-alive connections, rotating over 16 runs, each call a new operation id), ${s.non2xx} not 2xx, ${s.errors} errors/timeouts; RSS sampled every ${SAMPLE_MS / 1000} s. The demo fleet kept running.`,
        ],
      });
    }
    return {
      tables,
      data: {
        restSeconds,
        bareMb: bare,
        processes: rest.map((p) => ({ name: stackName(p), pid: p.pid, node: p.node, rssMb: p.rssMb })),
        soak: soakResult,
      },
    };
  },
};
