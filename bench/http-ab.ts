// Same-window A/B of two checkouts' API processes (docs/benchmarks.md#http): each checkout's `quiesce
// api` runs as a process of its own, side by side, against one fresh database; rounds of each measure
// alternate A, B, A, B … so both see the same machine load. Prints per-round and summed figures.
//   npx tsx bench/http-ab.ts --a <checkout> --b <checkout> [--rounds 4] [--amount 3000] [--concurrency 1,16]
//     [--measures gate,read,register] [--env-a K=V,…] [--env-b K=V,…] [--cpu-prof-b <dir>: B writes a V8 CPU profile there]
// A checkout needs node_modules and lib/generated (a symlink to this one's is enough).
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { freshDatabase } from "./lib/fresh-database";
import { load } from "./lib/load";
import { cpuMsOf, freePort, startProcess, stopProcess, type Proc } from "./lib/processes";
import { createApiKey } from "../lib/modules/keys/api-keys";
import { ensureTeam } from "../lib/modules/members/admin-directory";
import { createRun } from "../lib/modules/runs/register/create-run";
import { newId } from "../lib/platform/ids";
import { closeDbClients } from "../lib/start/database";

const SYSTEM = { type: "system", name: "bench-ab" } as const;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

function envList(s: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const kv of (s ?? "").split(",").filter(Boolean)) {
    const i = kv.indexOf("=");
    out[kv.slice(0, i)] = kv.slice(i + 1);
  }
  return out;
}

async function main() {
  const { values } = parseArgs({
    options: {
      a: { type: "string" },
      b: { type: "string" },
      rounds: { type: "string", default: "4" },
      amount: { type: "string", default: "3000" },
      concurrency: { type: "string", default: "1,16" },
      measures: { type: "string", default: "gate,read,register" },
      "env-a": { type: "string" },
      "env-b": { type: "string" },
      "cpu-prof-b": { type: "string" },
    },
  });
  if (!values.a || !values.b) throw new Error("--a and --b: two checkouts");
  const rounds = Number(values.rounds);
  const amount = Number(values.amount);
  const concurrencies = values.concurrency!.split(",").map(Number);
  const measures = values.measures!.split(",");
  const log = (l: string) => console.error(`[ab] ${l}`);
  process.env.QUIESCE_DB_POOL ??= String(Math.max(...concurrencies) + 4);
  const db = await freshDatabase(log);
  process.env.DATABASE_URL = db.url;
  const procs: Proc[] = [];
  try {
    const team = (await ensureTeam(SYSTEM, { slug: `bench-ab-${process.pid}`, name: "Bench A/B" })).team;
    const key = await createApiKey(SYSTEM, { teamId: team.id, kind: "agent", name: "bench ab agent" });
    const runs: Awaited<ReturnType<typeof createRun>>[] = [];
    for (let i = 0; i < 16; i++) runs.push(await createRun(SYSTEM, { taskId: `ab-${i}`, teamId: team.id, leaseTtlSeconds: 3600 }));
    const parent = runs[0]!;
    const auth = { authorization: `Bearer ${key.secret}` };
    const env = {
      DATABASE_URL: db.url,
      QUIESCE_DB_POOL: process.env.QUIESCE_DB_POOL,
      QUIESCE_LOG_LEVEL: "warn",
      // Run registration is measured flat out with one key: past the per-key quota it would be 429s.
      QUIESCE_QUOTA_RUNS_PER_MINUTE: "0",
      NEXTAUTH_SECRET: "bench-only-secret-0123456789abcdef",
      NEXTAUTH_URL: "http://localhost:3000",
      NODE_ENV: "production",
    };
    for (const [name, dir, extra] of [
      ["A", values.a, envList(values["env-a"])],
      ["B", values.b, envList(values["env-b"])],
    ] as const) {
      const port = await freePort();
      const p = await startProcess(
        name,
        [
          ...(name === "B" && values["cpu-prof-b"] ? ["--cpu-prof", `--cpu-prof-dir=${values["cpu-prof-b"]}`] : []),
          "--conditions=react-server",
          "--import",
          "tsx",
          path.join(path.resolve(dir), "bin/quiesce.ts"),
          "api",
          "--port",
          String(port),
        ],
        { ...env, ...extra },
        port,
        "/api/v1/openapi.json",
        path.resolve(dir),
      );
      procs.push(p);
    }
    let rr = 0;
    let task = 0;
    const specs = {
      gate: (url: string) => ({
        url: `${url}/api/v1/gate`,
        method: "POST" as const,
        headers: auth,
        body: () => {
          const r = runs[rr++ % runs.length]!;
          return JSON.stringify({ runId: r.runId, leaseId: r.leaseId, epoch: r.epoch, operationId: newId("op"), tool: "bench.noop" });
        },
      }),
      read: (url: string) => ({ url: `${url}/api/v1/runs/${parent.runId}`, headers: auth }),
      register: (url: string) => ({
        url: `${url}/api/v1/runs`,
        method: "POST" as const,
        headers: auth,
        status: 201,
        body: () => {
          const n = task++;
          return JSON.stringify(
            n % 10 === 9
              ? { taskId: `ab-child-${n}`, parentRunId: parent.runId, parentLeaseId: parent.leaseId }
              : { taskId: `ab-reg-${n}` },
          );
        },
      }),
    } as const;
    for (const c of concurrencies) {
      for (const m of measures) {
        const spec = specs[m as keyof typeof specs];
        if (!spec) throw new Error(`unknown measure ${m}`);
        const n = m === "register" ? Math.ceil(amount / 4) : c === 1 ? Math.ceil(amount / 3) : amount;
        const per: Record<string, { rate: number; p50: number; cpu: number }[]> = { A: [], B: [] };
        for (const p of procs) await load({ name: `${p.name} warm`, ...spec(p.url), connections: c, amount: 200 }, 0);
        for (let r = 0; r < rounds; r++) {
          // Alternate which goes first, so neither always follows the other.
          const order = r % 2 === 0 ? procs : [...procs].reverse();
          for (const p of order) {
            const cpu0 = cpuMsOf(p.child.pid);
            const s = await load({ name: `${p.name} ${m}`, ...spec(p.url), connections: c, amount: n }, 0);
            per[p.name]!.push({ rate: s.perSecond, p50: s.p50, cpu: (cpuMsOf(p.child.pid) - cpu0) / n });
          }
        }
        const mean = (k: string) => per[k]!.reduce((s, x) => s + x.rate, 0) / rounds;
        const med = (k: string, f: "p50" | "cpu") => median(per[k]!.map((x) => x[f]));
        // Each round of A and the round of B next to it ran under nearly the same load: the median of
        // those paired ratios is steadier than the ratio of the means on a shared machine.
        const pairs = per.A!.map((a, i) => per.B![i]!.rate / a.rate);
        const cpuA = per.A!.reduce((s, x) => s + x.cpu, 0) / rounds;
        const cpuB = per.B!.reduce((s, x) => s + x.cpu, 0) / rounds;
        console.log(
          `${m} c${c}: A ${mean("A").toFixed(0)}/s p50 ${med("A", "p50").toFixed(2)} ms, API CPU ${cpuA.toFixed(3)} ms/req | ` +
            `B ${mean("B").toFixed(0)}/s p50 ${med("B", "p50").toFixed(2)} ms, API CPU ${cpuB.toFixed(3)} ms/req | ` +
            `B/A throughput ${(mean("B") / mean("A")).toFixed(2)}x (median of paired rounds ${median(pairs).toFixed(2)}x), CPU per request ${(cpuB / cpuA).toFixed(2)}x` +
            `  rounds A ${per.A!.map((x) => x.rate.toFixed(0)).join(",")} B ${per.B!.map((x) => x.rate.toFixed(0)).join(",")}`,
        );
      }
    }
    console.log(
      `load average ${os
        .loadavg()
        .map((l) => l.toFixed(1))
        .join(" ")}`,
    );
  } finally {
    for (const p of procs) await stopProcess(p);
    await closeDbClients();
    await db.drop();
  }
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(e);
    process.exit(1);
  },
);
