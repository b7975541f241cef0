// The machine API over HTTP, as agents call it (keep-alive connections, load driven by autocannon),
// against a bare baseline in the same run: a minimal node:http server doing one INSERT … RETURNING per
// request over the same pool (bench/lib/baseline-server.ts). Servers measured, each a process of its own:
//  - the API process (`quiesce api`: the route modules on node:http, docs/deploy.md#the-api-process);
//  - Next (`next start`), when a production build exists (`npm run build`), for the comparison that
//    decided the API process, and the console's port as agents reach it (its front forwarding /api/v1
//    to the API process).
// Targets: gate throughput at the widest concurrency ≥ 0.6× the baseline; gate p50 at
// concurrency 1 ≤ 1.5 ms. Reported, never asserted.
import os from "node:os";
import { randomBytes } from "node:crypto";
import path from "node:path";
import { existsSync } from "node:fs";
import { spawn } from "node:child_process";
import type { BenchSection } from "./lib/section";
import { pooled, type Stats } from "./lib/measure";
import { load, raceKill, type RaceResult } from "./lib/load";
import pg from "pg";
import { cpuMsOf, freePort, startProcess, stopProcess, type Proc } from "./lib/processes";
import { rssOf } from "./lib/rss";
import { ms, ratio, type BenchTable } from "./lib/report";
import { createApiKey } from "../lib/modules/keys/api-keys";
import { ensureMembership, ensureTeam, ensureUser } from "../lib/modules/members/admin-directory";
import { createRun } from "../lib/modules/runs/register/create-run";
import { newId } from "../lib/platform/ids";
import { setting } from "../lib/platform/config";

const SYSTEM = { type: "system", name: "bench" } as const;
const ROOT = path.resolve(import.meta.dirname, "..");
const GATE_RATIO = 0.6;
const GATE_P50_MS = 1.5;
const RACE_RATE = 300;

/** An operator user of the bench team, for the kill (operator keys act for their user's role). */
async function benchOperator(teamId: string): Promise<string> {
  const { user } = await ensureUser(SYSTEM, {
    email: `bench-operator-${process.pid}@bench.invalid`,
    name: "Bench operator",
    passwordHash: null,
  });
  await ensureMembership(SYSTEM, { teamId, userId: user.id, role: "operator" });
  return user.id;
}

/** One round of the gate's in-flight A/B: throughput, the API process's CPU per request, calls per commit. */
interface InFlightRound {
  perSecond: number;
  cpuUs: number;
  callsPerCommit: number;
}

/**
 * The gate batcher's size over HTTP (QUIESCE_GATE_BATCH_INFLIGHT, docs/gate.md#batches): two API processes
 * that differ only in it, rounds interleaved A, B, B, A … at the widest concurrency. Calls per commit are
 * read from the database: each batch is one transaction, so the operations a round created carry as many
 * distinct xmin values as the round had commits.
 */
async function inFlightAb(
  url: string,
  variants: { inFlight: number; proc: Proc }[],
  spec: { auth: Record<string, string>; body: (ids: string[]) => () => string; connections: number; amount: number; rounds: number },
): Promise<Map<number, InFlightRound[]>> {
  const db = new pg.Client({ connectionString: url });
  await db.connect();
  const out = new Map<number, InFlightRound[]>(variants.map((v) => [v.inFlight, []]));
  try {
    for (let round = 0; round < spec.rounds; round++) {
      for (const v of round % 2 === 0 ? variants : [...variants].reverse()) {
        const ids: string[] = [];
        const cpu0 = cpuMsOf(v.proc.child.pid);
        const s = await load(
          {
            name: `gate, ${v.inFlight} in flight`,
            url: `${v.proc.url}/api/v1/gate`,
            method: "POST",
            headers: spec.auth,
            body: spec.body(ids),
            connections: spec.connections,
            amount: spec.amount,
          },
          0,
        );
        const cpuUs = ((cpuMsOf(v.proc.child.pid) - cpu0) * 1000) / spec.amount;
        const tx = (
          await db.query<{ n: number; tx: number }>(
            "SELECT count(*)::int AS n, count(DISTINCT xmin::text)::int AS tx FROM operations WHERE operation_id = ANY ($1::text[])",
            [ids],
          )
        ).rows[0]!;
        out.get(v.inFlight)!.push({ perSecond: s.perSecond, cpuUs, callsPerCommit: tx.n / Math.max(1, tx.tx) });
      }
    }
  } finally {
    await db.end();
  }
  return out;
}

export const httpSection: BenchSection = {
  name: "http",
  title: "The machine API over HTTP vs. a bare node:http INSERT server",
  async run(ctx) {
    const maxC = Math.max(...ctx.concurrencies);
    const team = (await ensureTeam(SYSTEM, { slug: `bench-http-${process.pid}`, name: "Bench HTTP" })).team;
    const key = await createApiKey(SYSTEM, { teamId: team.id, kind: "agent", name: "bench http agent" });
    const runs: Awaited<ReturnType<typeof createRun>>[] = [];
    for (let i = 0; i < maxC; i++)
      runs.push(await createRun(SYSTEM, { taskId: `bench-http-${i}`, teamId: team.id, leaseTtlSeconds: 3600 }));
    const auth = { authorization: `Bearer ${key.secret}` };
    const env: Record<string, string> = {
      DATABASE_URL: ctx.url,
      QUIESCE_DB_POOL: process.env.QUIESCE_DB_POOL ?? String(maxC + 4),
      QUIESCE_LOG_LEVEL: "warn",
      // Run registration is measured flat out with one key: past the per-key quota it would be 429s.
      QUIESCE_QUOTA_RUNS_PER_MINUTE: "0",
      NEXTAUTH_SECRET: "bench-only-secret-0123456789abcdef",
      NEXTAUTH_URL: "http://localhost:3000",
      NODE_ENV: "production",
    };
    const servers: Proc[] = [];
    const extra: Proc[] = [];
    let inFlight: Map<number, InFlightRound[]> | undefined;
    const stats: Record<string, Stats> = {};
    let race: RaceResult | undefined;
    const rss: Record<string, number | null> = {};
    try {
      const basePort = await freePort();
      // The baseline prints its own port; give it a fixed one instead to keep startup uniform.
      const baseline = await (async () => {
        const child = spawn(process.execPath, ["--import", "tsx", "bench/lib/baseline-server.ts"], {
          cwd: ROOT,
          env: { ...process.env, ...env },
          stdio: ["ignore", "pipe", "pipe"],
        });
        const port = await new Promise<number>((resolve, reject) => {
          let out = "";
          child.stdout!.on("data", (b: Buffer) => {
            out += b.toString();
            const m = /listening (\d+)/.exec(out);
            if (m) resolve(Number(m[1]));
          });
          child.stderr!.on("data", (b: Buffer) => {
            out += b.toString();
          });
          child.once("exit", (code) => reject(new Error(`baseline server exited (${code}): ${out}`)));
        });
        return { name: "baseline", url: `http://127.0.0.1:${port}`, child } as Proc;
      })();
      void basePort;
      servers.push(baseline);
      const apiPort = await freePort();
      // QUIESCE_BENCH_CPU_PROF=<dir>: the API process writes a V8 CPU profile there (for finding what to cut).
      const prof = process.env.QUIESCE_BENCH_CPU_PROF ? ["--cpu-prof", `--cpu-prof-dir=${process.env.QUIESCE_BENCH_CPU_PROF}`] : [];
      servers.push(
        await startProcess(
          "api",
          [...prof, "--conditions=react-server", "--import", "tsx", "bin/quiesce.ts", "api", "--port", String(apiPort)],
          env,
          apiPort,
          "/api/v1/openapi.json",
        ),
      );
      // The same API process with the other batcher size, for the in-flight A/B below (not in the table).
      const defaultInFlight = setting("QUIESCE_GATE_BATCH_INFLIGHT");
      const altInFlight = defaultInFlight === 1 ? 2 : 1;
      const altPort = await freePort();
      const alt = await startProcess(
        `api-inflight-${altInFlight}`,
        ["--conditions=react-server", "--import", "tsx", "bin/quiesce.ts", "api", "--port", String(altPort)],
        { ...env, QUIESCE_GATE_BATCH_INFLIGHT: String(altInFlight) },
        altPort,
        "/api/v1/openapi.json",
      );
      extra.push(alt);
      if (existsSync(path.join(ROOT, ".next", "BUILD_ID"))) {
        const nextPort = await freePort();
        servers.push(
          await startProcess(
            "next",
            [path.join(ROOT, "node_modules/next/dist/bin/next"), "start", "-p", String(nextPort), "-H", "127.0.0.1"],
            env,
            nextPort,
            "/api/v1/openapi.json",
          ),
        );
        // The agents' one way in: the console's port as `npm start` runs it, its front forwarding /api/v1
        // to the API process above (lib/start/api-forward.ts).
        const frontPort = await freePort();
        const frontSecret = randomBytes(32).toString("base64url");
        servers.push(
          await startProcess(
            "console port (front → api)",
            ["--import", "tsx", "lib/start/web-main.ts", "start", "-p", String(frontPort), "-H", "127.0.0.1"],
            { ...env, QUIESCE_API_UPSTREAM: servers.find((s) => s.name === "api")!.url, QUIESCE_FRONT_SECRET: frontSecret },
            frontPort,
            "/api/v1/openapi.json",
          ),
        );
      } else {
        ctx.log(
          "no production build (.next/BUILD_ID): Next and the console's port are not measured; run `npm run build` first to include them",
        );
      }
      let rr = 0;
      const gateBody = () => {
        const r = runs[rr++ % runs.length]!;
        return JSON.stringify({ runId: r.runId, leaseId: r.leaseId, epoch: r.epoch, operationId: newId("op"), tool: "bench.noop" });
      };
      let task = 0;
      const parent = runs[0]!;
      const runBody = () => {
        const n = task++;
        return JSON.stringify(
          n % 10 === 9
            ? { taskId: `bench-child-${n}`, parentRunId: parent.runId, parentLeaseId: parent.leaseId }
            : { taskId: `bench-reg-${n}` },
        );
      };
      for (const c of ctx.concurrencies) {
        const amount = ctx.iterations * (c === 1 ? 1 : 2);
        const warm = Math.min(ctx.warmup, amount);
        ctx.log(`concurrency ${c}: ${amount} requests per measure …`);
        // The baseline and the gate, whose ratio is the throughput target, in two halves interleaved
        // baseline, gate, gate, baseline at concurrency > 1, pooled: a drift in the machine's load weighs
        // on both alike instead of deciding the ratio.
        const halves = c === 1 ? 1 : 2;
        const half = Math.ceil(amount / halves);
        const baselineLoad = () =>
          load(
            {
              name: "baseline: INSERT … RETURNING (node:http)",
              url: `${baseline.url}/`,
              method: "POST",
              body: () => "{}",
              connections: c,
              amount: half,
            },
            warm,
          );
        const gateLoad = (s: Proc) =>
          load(
            {
              name: `${s.name}: POST /api/v1/gate`,
              url: `${s.url}/api/v1/gate`,
              method: "POST",
              headers: auth,
              body: gateBody,
              connections: c,
              amount: half,
            },
            warm,
          );
        const apiServers = servers.filter((x) => x !== baseline);
        const baselines = [await baselineLoad()];
        const gates = new Map<Proc, Stats[]>(apiServers.map((s) => [s, []]));
        for (const s of apiServers) gates.get(s)!.push(await gateLoad(s));
        if (halves === 2) {
          for (const s of [...apiServers].reverse()) gates.get(s)!.push(await gateLoad(s));
          baselines.push(await baselineLoad());
        }
        stats[`${c}:baseline`] = pooled(baselines);
        for (const s of apiServers) stats[`${c}:${s.name}:gate`] = pooled(gates.get(s)!);
        for (const s of apiServers) {
          stats[`${c}:${s.name}:read`] = await load(
            {
              name: `${s.name}: GET /api/v1/runs/{id}`,
              url: `${s.url}/api/v1/runs/${parent.runId}`,
              headers: auth,
              connections: c,
              amount,
            },
            warm,
          );
          stats[`${c}:${s.name}:openapi`] = await load(
            { name: `${s.name}: GET /api/v1/openapi.json`, url: `${s.url}/api/v1/openapi.json`, connections: c, amount },
            warm,
          );
          stats[`${c}:${s.name}:register`] = await load(
            {
              name: `${s.name}: POST /api/v1/runs (a tenth children)`,
              url: `${s.url}/api/v1/runs`,
              method: "POST",
              headers: auth,
              body: runBody,
              connections: c,
              amount: Math.ceil(amount / 4),
              status: 201,
            },
            Math.min(warm, 50),
          );
        }
      }
      for (const s of servers) {
        const r = s.child.pid ? rssOf(s.child.pid) : null;
        rss[s.name] = r === null ? null : Math.round(r);
      }
      const api = servers.find((s) => s.name === "api")!;
      inFlight = await inFlightAb(
        ctx.url,
        [
          { inFlight: setting("QUIESCE_GATE_BATCH_INFLIGHT"), proc: api },
          { inFlight: altInFlight, proc: alt },
        ],
        {
          auth,
          connections: maxC,
          amount: ctx.iterations * 2,
          rounds: 4,
          body: (ids) => () => {
            const r = runs[rr++ % runs.length]!;
            const operationId = newId("op");
            ids.push(operationId);
            return JSON.stringify({ runId: r.runId, leaseId: r.leaseId, epoch: r.epoch, operationId, tool: "bench.noop" });
          },
        },
      );
      // A kill lands during ~300 decisions/s on one run tree (root and its children), through the API process.
      const operator = await createApiKey(SYSTEM, {
        teamId: team.id,
        kind: "operator",
        name: "bench http operator",
        userId: await benchOperator(team.id),
      });
      const root = await createRun(SYSTEM, { taskId: "bench-race-root", teamId: team.id, leaseTtlSeconds: 3600 });
      const tree = [root];
      for (let i = 0; i < 7; i++)
        tree.push(
          await createRun(SYSTEM, { taskId: `bench-race-${i}`, teamId: team.id, parentRunId: root.runId, parentLeaseId: root.leaseId }),
        );
      let t = 0;
      race = await raceKill({
        url: `${api.url}/api/v1/gate`,
        headers: auth,
        rate: RACE_RATE,
        seconds: 6,
        connections: 16,
        body: () => {
          const r = tree[t++ % tree.length]!;
          return JSON.stringify({ runId: r.runId, leaseId: r.leaseId, epoch: r.epoch, operationId: newId("op"), tool: "bench.noop" });
        },
        kill: async () => {
          const res = await fetch(`${api.url}/api/v1/runs/${root.runId}/kill`, {
            method: "POST",
            headers: { authorization: `Bearer ${operator.secret}`, "content-type": "application/json" },
            body: JSON.stringify({ reason: "bench: kill under load" }),
          });
          if (!res.ok) throw new Error(`kill answered ${res.status}: ${await res.text()}`);
        },
      });
    } finally {
      for (const s of [...servers, ...extra]) await stopProcess(s);
    }

    const rows: string[][] = [];
    const notes: string[] = [];
    for (const c of ctx.concurrencies) {
      const base = stats[`${c}:baseline`]!;
      for (const [k, s] of Object.entries(stats)) {
        if (!k.startsWith(`${c}:`)) continue;
        rows.push([
          String(c),
          s.name,
          ms(s.p50),
          ms(s.p99),
          Math.round(s.perSecond).toLocaleString("en-US"),
          ratio(s.perSecond / base.perSecond),
        ]);
      }
      for (const name of servers.map((s) => s.name).filter((n) => n !== "baseline")) {
        const gate = stats[`${c}:${name}:gate`];
        if (!gate) continue;
        if (c === maxC) {
          const x = gate.perSecond / base.perSecond;
          notes.push(
            `${name}, concurrency ${c}: gate ${Math.round(gate.perSecond)}/s = ${ratio(x)} the baseline → ${x >= GATE_RATIO ? "PASS" : "MISS"} (target ≥ ${GATE_RATIO}×)`,
          );
        }
        if (c === 1)
          notes.push(
            `${name}, concurrency 1: gate p50 ${ms(gate.p50)} ms → ${gate.p50 <= GATE_P50_MS ? "PASS" : "MISS"} (target ≤ ${GATE_P50_MS} ms)`,
          );
      }
    }
    if (inFlight) {
      const sum = (xs: InFlightRound[], f: (r: InFlightRound) => number) => xs.reduce((a, r) => a + f(r), 0) / xs.length;
      notes.push(
        `batcher size over HTTP, concurrency ${maxC}, API processes differing only in QUIESCE_GATE_BATCH_INFLIGHT (default ${setting("QUIESCE_GATE_BATCH_INFLIGHT")}), ${[...inFlight.values()][0]!.length} interleaved rounds each: ${[
          ...inFlight,
        ]
          .map(
            ([k, rs]) =>
              `${k} in flight → ${Math.round(sum(rs, (r) => r.perSecond))}/s (rounds ${rs.map((r) => Math.round(r.perSecond)).join(", ")}), API CPU ${Math.round(sum(rs, (r) => r.cpuUs))} µs per decision, ${sum(rs, (r) => r.callsPerCommit).toFixed(1)} calls per commit`,
          )
          .join("; ")}`,
      );
    }
    if (race) {
      notes.push(
        `kill under load (API process, ${race.rate.toFixed(0)} decisions/s offered at ${RACE_RATE}/s over a root and 7 children): ${race.before} calls sent before the kill (${race.beforeAllow} allow), kill call ${ms(race.killMs)} ms, ${race.after} calls sent after it returned, ${race.afterAllow} of them allow → ${race.afterAllow === 0 && race.after > 0 ? "PASS" : "FAIL"} (target: none)`,
      );
    }
    notes.push(
      `resident memory after the run (MB): ${Object.entries(rss)
        .map(([n, v]) => `${n} ${v ?? "n/a"}`)
        .join(", ")}`,
    );
    notes.push(
      `autocannon, keep-alive, ${ctx.iterations} requests at concurrency 1 and ${ctx.iterations * 2} above (run registration: a quarter of that), after up to ${ctx.warmup} warm-up requests (above concurrency 1 the baseline and the gate in two halves each, interleaved baseline, gate, gate, baseline, and pooled); each server a process of its own with a pool of ${env.QUIESCE_DB_POOL}; gate requests rotate over ${maxC} runs, each with a new operation id.`,
    );
    notes.push(
      `Node ${process.version}; ${os.cpus().length} CPUs shared by the load generator, the servers and PostgreSQL; load average ${os
        .loadavg()
        .map((l) => l.toFixed(1))
        .join(" ")} at the end.`,
    );
    const table: BenchTable = {
      title: this.title,
      columns: ["concurrency", "measure", "p50 ms", "p99 ms", "per second", "per second ÷ baseline"],
      rows,
      notes,
    };
    return { tables: [table], data: { stats, rss, race, inFlight: inFlight ? Object.fromEntries(inFlight) : null } };
  },
};
