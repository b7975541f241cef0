// `npm run evals -- --ha` (or `npm run evals:ha`): the HA drill (docs/deploy.md#the-ha-drill).
// A pg_auto_failover monitor, a primary and a synchronous standby, PgBouncer (transaction mode) in
// front of each node, 2 API replicas (the route handlers served without Next, evals/support/api-process.ts),
// 2 barrier engines and a worker pod, all on this machine. Then:
//   1. engines racing: 200 kills, both engines running → exactly one receipt per barrier version,
//      no settlement twice;
//   2. failover in the middle of a kill: the primary's machine is SIGKILLed while kills are in
//      flight → every kill answered 202 is committed and enforced, an unanswered one is reported
//      failed, no gate answers allow for a killed tree, the barriers finish on the new primary;
//   3. figures: time until gates answer again, gate latency before/during/after, denials during.
// Writes evals/reports/ha-<stamp>.json and the figures to docs/ha-drill.md; exits 1 on any failed check.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { randomBytes } from "node:crypto";
import pg from "pg";
import { QuiesceClient } from "../lib/agent/sdk/client";
import { QuiesceApiError } from "../lib/agent/sdk/errors";
import { migrate } from "../lib/platform/db/migrate";
import { newClient } from "../lib/platform/db/hosts";
import { closeDbClients } from "../lib/start/database";
import { newId } from "../lib/platform/ids";
import { HaFormation } from "./support/ha-formation";
import { createFixtures, type Fixtures } from "./support/fixtures";
import { freePort } from "./support/ports";
import { killAll, ROOT, spawnCli, spawnTs, waitUntil, type Proc } from "./support/proc";
import { Pod } from "./support/pod";

const RACE_KILLS = 200;
const FAILOVER_KILLS = 40;
const KILL_SPACING_MS = 100;
const KILL_AT = 10;
const GATE_BUDGET_MS = 2000;

interface Check {
  name: string;
  ok: boolean;
  detail: string;
}
interface Sample {
  t: number;
  ms: number;
  outcome: string;
}

const log = (l: string) => console.error(`[ha] ${l}`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function pct(xs: number[], p: number): number {
  if (!xs.length) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
}

async function pool<T, R>(items: T[], n: number, fn: (x: T, i: number) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: n }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await fn(items[i]!, i);
      }
    }),
  );
  return out;
}

async function main(): Promise<number> {
  const started = new Date();
  const stamp = started.toISOString().replace(/[:.]/g, "-");
  const reportsDir = path.join(ROOT, "evals", "reports");
  const logDir = path.join(reportsDir, `ha-${stamp}-logs`);
  mkdirSync(logDir, { recursive: true });
  const checks: Check[] = [];
  const check = (name: string, ok: boolean, detail: string) => {
    checks.push({ name, ok, detail });
    log(`${ok ? "PASS" : "FAIL"} ${name}: ${detail}`);
  };
  const figures: Record<string, unknown> = {};
  const procs: Proc[] = [];
  let formation: HaFormation | undefined;
  let pod: Pod | undefined;

  try {
    log("starting pg_auto_failover (monitor, primary, synchronous standby) and PgBouncer …");
    formation = await HaFormation.up(logDir, log);
    const f = formation;
    log(`formation: ${JSON.stringify(await f.states())}`);
    const primary0 = await f.primary();
    const admin = new pg.Client({ host: "127.0.0.1", port: primary0.port, user: "postgres", database: "postgres" });
    await admin.connect();
    await admin.query("CREATE DATABASE quiesce");
    await admin.end();
    const direct = f.url("quiesce", "direct");
    const pooled = f.url("quiesce", "pooled");
    await migrate(direct, log);
    process.env.DATABASE_URL = direct;
    const tag = `${Date.now().toString(36)}${randomBytes(2).toString("hex")}`;
    const fx: Fixtures = await createFixtures("http://127.0.0.1:9", tag);
    const teamId = fx.main.teamId;

    const env = {
      DATABASE_URL: pooled,
      QUIESCE_DB_POOLER: "transaction",
      QUIESCE_LISTEN_URL: direct,
      QUIESCE_GATE_DB_BUDGET_MS: String(GATE_BUDGET_MS),
      QUIESCE_DB_ACQUIRE_TIMEOUT_MS: "3000",
      QUIESCE_DB_STATEMENT_TIMEOUT_MS: "10000",
      QUIESCE_LOCAL_SETTLE_MS: "1500",
      NEXTAUTH_SECRET: randomBytes(24).toString("base64url"),
      NEXT_TELEMETRY_DISABLED: "1",
    };
    const apis: string[] = [];
    for (const name of ["api-1", "api-2"]) {
      const port = await freePort();
      const url = `http://127.0.0.1:${port}`;
      const p = spawnTs(name, path.join(ROOT, "evals", "support", "api-process.ts"), [], {
        env: { ...env, PORT: String(port), QUIESCE_URL: url, NEXTAUTH_URL: url },
        logDir,
      });
      procs.push(p);
      apis.push(url);
    }
    for (const [i, url] of apis.entries()) {
      await waitUntil(
        `API replica ${url}`,
        async () => {
          if (!procs[i]!.alive()) throw new Error(`API replica exited:\n${procs[i]!.tail(30)}`);
          return (await fetch(`${url}/api/v1/openapi.json`, { signal: AbortSignal.timeout(5000) }).catch(() => null))?.ok ?? false;
        },
        120_000,
        300,
      );
    }
    const engines = ["engine-1", "engine-2"].map((id) =>
      spawnCli(id, ["barrier-worker", "--team", teamId, "--id", id, "--poll-ms", "500"], { env, logDir }),
    );
    procs.push(...engines);
    for (const e of engines) {
      await waitUntil(
        `${e.name} to start`,
        async () => {
          if (!e.alive()) throw new Error(`${e.name} exited:\n${e.tail()}`);
          return /barrier engine .* started/.test(e.tail(50));
        },
        120_000,
        200,
      );
    }
    pod = new Pod("worker", { ...env, QUIESCE_URL: apis[0]!, QUIESCE_API_KEY: fx.main.keys.worker! }, logDir);
    await pod.start();
    log(`up: API ${apis.join(", ")}, ${engines.map((e) => `${e.name} pid ${e.pid}`).join(", ")}, ${pod.label}`);

    const client = (i: number, key: string, timeoutMs = 15_000) => new QuiesceClient({ url: apis[i % 2]!, apiKey: key, timeoutMs });
    const agent = (i: number) => client(i, fx.main.keys.agent!);
    const operator = (i: number) => client(i, fx.main.keys.operator!);
    const dbq = async <R extends pg.QueryResultRow>(sql: string, params: unknown[] = []) => {
      const c = newClient(direct, { connectionTimeoutMillis: 5000 });
      c.on("error", () => {});
      await c.connect();
      try {
        return (await c.query<R>(sql, params)).rows;
      } finally {
        await c.end().catch(() => {});
      }
    };

    /** A run with one running operation (the barrier has something to settle). */
    const runWithOp = async (i: number) => {
      const run = await agent(i).createRun({ taskId: `ha-${i}` });
      const g = await agent(i + 1).gate({
        runId: run.runId,
        leaseId: run.leaseId,
        epoch: run.epoch,
        operationId: newId("op"),
        tool: "shell.exec",
      });
      if (g.decision !== "allow") throw new Error(`setup gate answered ${g.decision} ${g.reason}`);
      return run;
    };

    // ---- 1. Engines racing ---------------------------------------------------------------
    log(`engines racing: ${RACE_KILLS} kills …`);
    const raceRuns = await pool(
      Array.from({ length: RACE_KILLS }, (_, i) => i),
      10,
      (i) => runWithOp(i),
    );
    const raceKills = await pool(raceRuns, 20, (r, i) => operator(i).kill(r.runId, "ha drill: engines racing"));
    const raceBarriers = raceKills.map((k) => k.barrierId);
    const t0 = Date.now();
    await waitUntil(
      "every race barrier to have its receipt",
      async () => {
        const n = (
          await dbq<{ n: string }>("SELECT count(DISTINCT barrier_id) AS n FROM stop_receipts WHERE barrier_id = ANY($1)", [raceBarriers])
        )[0]?.n;
        return Number(n) === RACE_KILLS;
      },
      180_000,
      500,
    );
    figures.raceReceiptsSeconds = (Date.now() - t0) / 1000;
    const dupReceipts = await dbq(
      "SELECT barrier_id, version, count(*) FROM stop_receipts WHERE barrier_id = ANY($1) GROUP BY 1, 2 HAVING count(*) > 1",
      [raceBarriers],
    );
    const perBarrier = await dbq<{ n: string }>(
      "SELECT count(*) AS n FROM stop_receipts WHERE barrier_id = ANY($1) GROUP BY barrier_id HAVING count(*) <> 1",
      [raceBarriers],
    );
    check(
      "engines racing: exactly one receipt per barrier version",
      dupReceipts.length === 0 && perBarrier.length === 0,
      `${RACE_KILLS} barriers, ${dupReceipts.length} duplicated versions, ${perBarrier.length} barriers with other than one receipt`,
    );
    const settlements = await dbq<{ n: string; settled: string; dup: string }>(
      `SELECT count(*) AS n, count(*) FILTER (WHERE settled_state IS NOT NULL) AS settled,
              count(*) - count(DISTINCT (barrier_id, operation_id)) AS dup FROM settlements WHERE barrier_id = ANY($1)`,
      [raceBarriers],
    );
    const s0 = settlements[0]!;
    check(
      "engines racing: no settlement done twice",
      Number(s0.dup) === 0 && Number(s0.settled) === Number(s0.n) && Number(s0.n) === RACE_KILLS,
      `${s0.n} settlements, ${s0.settled} settled, ${s0.dup} duplicates`,
    );
    // Which engine issued each receipt (their logs): both must have worked, together exactly once each.
    const issued = Object.fromEntries(
      engines.map((e) => {
        const text = readFileSync(path.join(logDir, `${e.name}.log`), "utf8");
        return [e.name, raceBarriers.filter((b) => text.includes(`${b}: receipt v1`)).length];
      }),
    );
    figures.raceReceiptsIssuedBy = issued;
    const total = Object.values(issued).reduce((a, b) => a + b, 0);
    check(
      "engines racing: both engines worked, each receipt issued once",
      Object.values(issued).every((n) => n > 0) && total === RACE_KILLS,
      JSON.stringify(issued),
    );

    // ---- 2. Failover in the middle of a kill -----------------------------------------------
    log("failover in the middle of a kill …");
    const live = await runWithOp(1000);
    const victims = await pool(
      Array.from({ length: FAILOVER_KILLS }, (_, i) => 2000 + i),
      10,
      (i) => runWithOp(i),
    );
    // A worker job running when the primary dies.
    const workerRun = await agent(0).createRun({ taskId: "ha-worker" });
    const workerOp = newId("op");
    await agent(0).registerOperation({
      runId: workerRun.runId,
      leaseId: workerRun.leaseId,
      epoch: workerRun.epoch,
      operationId: workerOp,
      kind: "queued",
      tool: "db.compatibility_check",
    });
    const workerJob = pod.run(
      { runId: workerRun.runId, leaseId: workerRun.leaseId, epoch: workerRun.epoch, operationId: workerOp },
      { kind: "long" },
    );
    await workerJob.started;

    const samples: Sample[] = [];
    const killed: Array<{ runId: string; leaseId: string; epoch: number; at: number }> = [];
    const staleAllows: string[] = [];
    let probing = true;
    const prober = (async () => {
      let i = 0;
      while (probing) {
        const t = Date.now();
        const c = client(i, fx.main.keys.agent!, GATE_BUDGET_MS + 8000);
        let outcome: string;
        try {
          const g = await c.gate({
            runId: live.runId,
            leaseId: live.leaseId,
            epoch: live.epoch,
            operationId: newId("op"),
            tool: "shell.exec",
          });
          outcome = g.decision === "allow" ? "allow" : `deny:${g.reason}`;
        } catch (e) {
          outcome = e instanceof QuiesceApiError ? `error:${e.status}:${e.code}` : "error:unreachable";
        }
        samples.push({ t, ms: Date.now() - t, outcome });
        // A tree whose kill was acknowledged must never be allowed again.
        const k = killed[i % Math.max(1, killed.length)];
        if (k) {
          const g = await c
            .gate({ runId: k.runId, leaseId: k.leaseId, epoch: k.epoch, operationId: newId("op"), tool: "shell.exec" })
            .catch(() => null);
          if (g?.decision === "allow") staleAllows.push(k.runId);
        }
        i++;
        await sleep(50);
      }
    })();
    await sleep(2000);

    let killAt = 0;
    const answers = await Promise.all(
      victims.map(async (r, i) => {
        await sleep(i * KILL_SPACING_MS);
        if (i === KILL_AT) {
          const p = await f.primary();
          killAt = Date.now();
          log(`SIGKILL the primary ${p.name} (port ${p.port}) with kills in flight`);
          f.killNode(p);
        }
        const sentAt = Date.now();
        try {
          const k = await operator(i).kill(r.runId, "ha drill: failover");
          killed.push({ runId: r.runId, leaseId: r.leaseId, epoch: r.epoch, at: Date.now() });
          return { runId: r.runId, sentAt, ok: true as const, barrierId: k.barrierId };
        } catch (e) {
          return { runId: r.runId, sentAt, ok: false as const, error: (e as Error).message };
        }
      }),
    );

    // Gates answer again: the first allow for the live run after the primary died.
    await waitUntil("gates to answer again", async () => samples.some((s) => s.t > killAt && s.outcome === "allow"), 120_000, 200);
    const recovered = samples.find((s) => s.t > killAt && s.outcome === "allow")!;
    await sleep(3000);
    probing = false;
    await prober;
    const newPrimary = await f.primary();
    log(`formation after failover: ${JSON.stringify(await f.states())}`);
    check("failover: the standby was promoted", newPrimary.name !== primary0.name, `primary ${primary0.name} → ${newPrimary.name}`);

    const acked = answers.filter((a) => a.ok);
    const failed = answers.filter((a) => !a.ok);
    const ackedIds = acked.map((a) => a.runId);
    const killedRows = await dbq<{ id: string }>("SELECT id FROM runs WHERE id = ANY($1) AND lifecycle = 'killed'", [ackedIds]);
    check(
      "failover: every kill answered 202 is committed",
      killedRows.length === acked.length,
      `${acked.length} answered, ${killedRows.length} killed on the new primary`,
    );
    let enforced = 0;
    for (const a of acked) {
      const r = victims.find((v) => v.runId === a.runId)!;
      const g = await agent(enforced).gate({
        runId: r.runId,
        leaseId: r.leaseId,
        epoch: r.epoch,
        operationId: newId("op"),
        tool: "shell.exec",
      });
      if (g.decision === "deny") enforced++;
    }
    check(
      "failover: every acknowledged kill is enforced (gates deny its tree)",
      enforced === acked.length,
      `${enforced}/${acked.length} denied`,
    );
    const failedIds = failed.map((a) => a.runId);
    const failedCommitted = failedIds.length
      ? await dbq<{ id: string }>("SELECT id FROM runs WHERE id = ANY($1) AND lifecycle = 'killed'", [failedIds])
      : [];
    check(
      "failover: a kill that got no answer is reported failed to its caller",
      failed.every((a) => a.error.length > 0),
      `${failed.length} failed with an error (${failedCommitted.length} of them committed anyway, answer lost); e.g. ${failed[0]?.error ?? "none"}`,
    );
    check(
      "failover: no gate answered allow for a killed tree",
      staleAllows.length === 0,
      `${staleAllows.length} stale allows over ${samples.length} probes`,
    );
    const ackedBarriers = acked.map((a) => a.barrierId);
    await waitUntil(
      "the barriers to finish on the new primary",
      async () => {
        const n = (
          await dbq<{ n: string }>("SELECT count(DISTINCT barrier_id) AS n FROM stop_receipts WHERE barrier_id = ANY($1)", [ackedBarriers])
        )[0]?.n;
        return Number(n) === ackedBarriers.length;
      },
      120_000,
      500,
    ).then(
      async () => {
        const after = (
          await dbq<{ n: string }>(
            "SELECT count(*) AS n FROM stop_receipts WHERE barrier_id = ANY($1) AND created_at > to_timestamp($2::float8 / 1000)",
            [ackedBarriers, killAt],
          )
        )[0]?.n;
        check(
          "failover: the barrier resumes on the new primary and issues its receipts",
          true,
          `${ackedBarriers.length} receipts, ${after} of them issued after the primary died`,
        );
      },
      (e: Error) => check("failover: the barrier resumes on the new primary and issues its receipts", false, e.message),
    );

    // The caller of a failed kill retries it: now it is acknowledged, committed and receipted.
    const retried = await pool(failed, 10, (a, i) => operator(i).kill(a.runId, "ha drill: retry after failover"));
    const retriedBarriers = retried.map((k) => k.barrierId);
    await waitUntil(
      "the retried kills' receipts",
      async () => {
        const n = (
          await dbq<{ n: string }>("SELECT count(DISTINCT barrier_id) AS n FROM stop_receipts WHERE barrier_id = ANY($1)", [
            retriedBarriers,
          ])
        )[0]?.n;
        return Number(n) === retriedBarriers.length;
      },
      120_000,
      500,
    ).then(
      () => check("failover: every failed kill, retried by its caller, is acknowledged and receipted", true, `${retried.length} retried`),
      (e: Error) => check("failover: every failed kill, retried by its caller, is acknowledged and receipted", false, e.message),
    );

    // The job that was running through the failover: its heartbeats failed, so it was aborted
    // (fail closed, control_unreachable) — or, had the kill come first, killed. Never left running.
    const through = await Promise.race([workerJob.outcome, sleep(30_000).then(() => null)]);
    check(
      "failover: a worker job running through the failover is stopped, not left running",
      through?.status === "aborted_unknown",
      `outcome ${through?.status} (${through?.reason})`,
    );
    // The worker pod survived the failover: a new job is admitted, and a kill stops it.
    const w2 = await agent(0).createRun({ taskId: "ha-worker-after" });
    const w2op = newId("op");
    await agent(0).registerOperation({
      runId: w2.runId,
      leaseId: w2.leaseId,
      epoch: w2.epoch,
      operationId: w2op,
      kind: "queued",
      tool: "db.compatibility_check",
    });
    const job2 = pod.run({ runId: w2.runId, leaseId: w2.leaseId, epoch: w2.epoch, operationId: w2op }, { kind: "long" });
    await job2.started;
    await operator(1).kill(w2.runId, "ha drill: worker after failover");
    const wo = await Promise.race([job2.outcome, sleep(60_000).then(() => null)]);
    check(
      "failover: after it, the worker's running job is aborted by a kill",
      wo?.status === "aborted_unknown" && wo.reason === "killed",
      `outcome ${wo?.status} (${wo?.reason})`,
    );

    // ---- 3. Figures ---------------------------------------------------------------------
    const before = samples.filter((s) => s.t < killAt);
    const during = samples.filter((s) => s.t >= killAt && s.t < recovered.t);
    const after = samples.filter((s) => s.t >= recovered.t);
    const lat = (xs: Sample[]) => ({
      n: xs.length,
      p50: pct(
        xs.map((s) => s.ms),
        50,
      ),
      p95: pct(
        xs.map((s) => s.ms),
        95,
      ),
      max: pct(
        xs.map((s) => s.ms),
        100,
      ),
    });
    const duringOutcomes: Record<string, number> = {};
    for (const s of during) duringOutcomes[s.outcome] = (duringOutcomes[s.outcome] ?? 0) + 1;
    Object.assign(figures, {
      secondsUntilGatesAnswer: (recovered.t - killAt) / 1000,
      gateLatencyMs: { before: lat(before), during: lat(during), after: lat(after) },
      duringFailover: {
        requests: during.length,
        denied: during.filter((s) => s.outcome.startsWith("deny")).length,
        errors: during.filter((s) => s.outcome.startsWith("error")).length,
        allowed: during.filter((s) => s.outcome === "allow").length,
        outcomes: duringOutcomes,
      },
      kills: { sent: answers.length, acknowledged: acked.length, failed: failed.length, failedButCommitted: failedCommitted.length },
    });
    check(
      "figures: no allow during the failover window",
      during.every((s) => s.outcome !== "allow"),
      JSON.stringify(duringOutcomes),
    );
  } catch (err) {
    check("drill ran to the end", false, (err as Error).stack ?? String(err));
  } finally {
    await Promise.allSettled([pod?.close()]);
    await Promise.allSettled(procs.map((p) => p.stop("SIGTERM")));
    await closeDbClients().catch(() => {});
    await formation?.down().catch(() => {});
    killAll();
  }

  const ok = checks.every((c) => c.ok);
  const report = {
    startedAt: started.toISOString(),
    finishedAt: new Date().toISOString(),
    ok,
    checks,
    figures,
    logs: path.relative(ROOT, logDir),
  };
  writeFileSync(path.join(reportsDir, `ha-${stamp}.json`), JSON.stringify(report, null, 2));
  writeFileSync(path.join(ROOT, "docs", "ha-drill.md"), renderDoc(report));
  console.log(JSON.stringify({ ok, figures }, null, 2));
  return ok ? 0 : 1;
}

function renderDoc(r: { startedAt: string; ok: boolean; checks: Check[]; figures: Record<string, unknown> }): string {
  const f = r.figures as {
    secondsUntilGatesAnswer?: number;
    raceReceiptsSeconds?: number;
    raceReceiptsIssuedBy?: Record<string, number>;
    gateLatencyMs?: Record<string, { n: number; p50: number; p95: number; max: number }>;
    duringFailover?: { requests: number; denied: number; errors: number; allowed: number; outcomes: Record<string, number> };
    kills?: { sent: number; acknowledged: number; failed: number; failedButCommitted: number };
  };
  const lines = [
    "# HA drill: figures",
    "",
    "Written by `npm run evals -- --ha` (evals/ha.ts); see [deploying](./deploy.md#the-ha-drill) for the setup.",
    `Last run ${r.startedAt} on this machine (2 cores shared): **${r.ok ? "all checks passed" : "CHECKS FAILED"}**.`,
    "",
    "| check | result | detail |",
    "| --- | --- | --- |",
    ...r.checks.map((c) => `| ${c.name} | ${c.ok ? "pass" : "FAIL"} | ${c.detail.split("\n")[0]!.replace(/\|/g, "\\|")} |`),
    "",
    "## Figures",
    "",
    `- Time until gates answer again after the primary was SIGKILLed: **${f.secondsUntilGatesAnswer ?? "n/a"} s**`,
    `- Requests to the gate during the failover: ${f.duringFailover?.requests ?? "n/a"}, denied ${f.duringFailover?.denied ?? "n/a"}, errors ${f.duringFailover?.errors ?? "n/a"}, allowed ${f.duringFailover?.allowed ?? "n/a"} (${JSON.stringify(f.duringFailover?.outcomes ?? {})})`,
    `- Kills sent around the failover: ${f.kills?.sent ?? "n/a"}, answered 202: ${f.kills?.acknowledged ?? "n/a"}, reported failed: ${f.kills?.failed ?? "n/a"} (of which committed anyway: ${f.kills?.failedButCommitted ?? "n/a"})`,
    `- 200 racing kills, both engines: all receipts in ${f.raceReceiptsSeconds ?? "n/a"} s, issued by ${JSON.stringify(f.raceReceiptsIssuedBy ?? {})}`,
    "",
    "| gate latency (ms) | n | p50 | p95 | max |",
    "| --- | --- | --- | --- | --- |",
    ...Object.entries(f.gateLatencyMs ?? {}).map(([k, v]) => `| ${k} | ${v.n} | ${v.p50} | ${v.p95} | ${v.max} |`),
    "",
  ];
  return lines.join("\n");
}

process.exitCode = await main();
process.exit(process.exitCode);
