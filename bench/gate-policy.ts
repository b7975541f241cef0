// The gate with the team's policy in it (docs/policies.md): one active policy (a require_approval rule that
// does not match the calls, so every call is decided through the policy step and allowed) and one budget
// (every call reserves one `calls` against it), against the same gate for a team without a policy, in the
// same run: one statement of c calls on a connection of its own (the sides interleaved statement by
// statement: the statement's own time, commit included), and the same calls as the API process asks them
// (the shared pool, batched), whose p50 and CPU per decision also carry the batcher's timing and, where the
// machine's CPUs are the bound, the policy step's CPU undiluted by the commit's wait.
// Target: both within 1.2× of the policy-free gate's. Reported, never asserted.
import pg from "pg";
import { performance } from "node:perf_hooks";
import { gateBatchStats, gateCheck, gateCheckBatch, type GateOutcome } from "../lib/modules/gate/statement";
import { createApiKey } from "../lib/modules/keys/api-keys";
import { ensureTeam } from "../lib/modules/members/admin-directory";
import { createPolicyVersion, enablePolicy } from "../lib/modules/policy";
import { createRun } from "../lib/modules/runs/register/create-run";
import { hashKeySecret } from "../lib/platform/auth/api-key";
import type { Principal } from "../lib/platform/auth/principal";
import { newId } from "../lib/platform/ids";
import { percentile, type Op, type Stats } from "./lib/measure";
import { cpuMeter } from "./lib/cpu";
import { ms, ratio, us, type BenchTable } from "./lib/report";

const verdict = (x: number) => (Number.isNaN(x) ? "not measured" : x <= POLICY_TARGET_RATIO ? "PASS" : "MISS");

const SYSTEM = { type: "system", name: "bench" } as const;
export const POLICY_TARGET_RATIO = 1.2;
type Side = "free" | "policy" | "tree";
const SIDES: Side[] = ["free", "policy", "tree"];
/** One round of segments: each side four times, every side as often early as late in the round. */
const ROUND = ["free", "policy", "tree", "tree", "policy", "free", "free", "tree", "policy", "policy", "tree", "free"] as const;
/**
 * The batched segments of one concurrency: rounds of short segments. The machine's speed drifts by a
 * tenth within seconds here, and above one caller the batches the batcher happens to form move one
 * segment's p50 by a quarter: with four segments a side, one slow stretch moved a side's pooled p50 alone.
 * One caller: two rounds of `iterations / 2` calls a segment; above: eight rounds of `2 × iterations`.
 */
function segments(iterations: number, c: number): { order: Side[]; calls: number } {
  const rounds = c > 1 ? 8 : 2;
  return { order: Array.from({ length: rounds }, () => ROUND).flat(), calls: Math.round(c > 1 ? iterations * 2 : iterations / 2) };
}

interface Caller {
  keyHash: string;
  runId: string;
  leaseId: string;
  epoch: number;
}

async function team(label: string, callers: number, budgetPer?: "team" | "run_tree"): Promise<Caller[]> {
  const t = (await ensureTeam(SYSTEM, { slug: `bench-${label}-${process.pid}`, name: `Bench ${label}` })).team;
  const key = await createApiKey(SYSTEM, { teamId: t.id, kind: "agent", name: `bench ${label}` });
  if (budgetPer) {
    const admin: Principal = { type: "user", userId: "bench", email: "bench@bench.invalid", teamId: t.id, role: "admin" };
    const v = await createPolicyVersion(admin, {
      rules: [
        { name: "deploys-need-a-yes", tool: "deployment.*", effect: "require_approval" },
        { name: "calls", effect: "budget", budget: { unit: "calls", limit: 1e12, per: budgetPer } },
      ],
    });
    await enablePolicy(admin, { version: v.version, reason: "bench" });
  }
  const out: Caller[] = [];
  for (let i = 0; i < callers; i++) {
    const run = await createRun(SYSTEM, { taskId: `bench-${label}-${i}`, teamId: t.id });
    out.push({ keyHash: hashKeySecret(key.secret), runId: run.runId, leaseId: run.leaseId, epoch: run.epoch });
  }
  return out;
}

function op(c: Caller, denials: { n: number; last?: string }): Op {
  return async () => {
    const out = await gateCheck({ ...c, operationId: newId("op"), tool: "bench.noop" });
    if (!out.ok || out.decision !== "allow") {
      denials.n++;
      denials.last = JSON.stringify(out);
    }
  };
}

/**
 * The same decisions with the batcher's timing taken out: on one connection of its own, one statement at
 * a time deciding `c` calls together (c = 1: quiesce_gate; above: one quiesce_gate_batch of c calls, what
 * the batcher sends when c calls arrive at once), the three sides interleaved statement by statement, so
 * that the machine's drift weighs on each alike. Median milliseconds per statement, per side.
 */
async function statementCost(
  url: string,
  sides: Record<Side, Caller[]>,
  c: number,
  rounds: number,
  denials: { n: number; last?: string },
): Promise<Record<Side, number>> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const times: Record<Side, number[]> = { free: [], policy: [], tree: [] };
  const check = (out: GateOutcome) => {
    if (!out.ok || out.decision !== "allow") {
      denials.n++;
      denials.last = JSON.stringify(out);
    }
  };
  try {
    for (let r = -20; r < rounds; r++) {
      // each round in a turning order (the first 20 rounds warm up and are not counted)
      for (let j = 0; j < SIDES.length; j++) {
        const k = SIDES[(r + 60 + j) % SIDES.length]!;
        const calls = sides[k].slice(0, c).map((x) => ({ ...x, operationId: newId("op"), tool: "bench.noop" }));
        const t0 = performance.now();
        if (c === 1) check(await gateCheck(calls[0]!, client));
        else for (const out of await gateCheckBatch(calls, client)) check(out);
        if (r >= 0) times[k].push(performance.now() - t0);
      }
    }
  } finally {
    await client.end();
  }
  const median = (xs: number[]) =>
    percentile(
      [...xs].sort((a, b) => a - b),
      50,
    );
  return { free: median(times.free), policy: median(times.policy), tree: median(times.tree) };
}

export async function policyGateAb(ctx: {
  url: string;
  concurrencies: number[];
  iterations: number;
  warmup: number;
  log: (l: string) => void;
}): Promise<{
  table: BenchTable;
  data: {
    runs: Record<string, Record<number, Stats[]>>;
    statements: Record<number, Record<Side, number>>;
    perBatch: Record<string, Record<number, number[]>>;
  };
}> {
  const maxC = Math.max(...ctx.concurrencies);
  const sides = {
    free: await team("policy-free", maxC),
    policy: await team("policy-team-budget", maxC, "team"),
    tree: await team("policy-tree-budget", maxC, "run_tree"),
  };
  const denials = { n: 0 } as { n: number; last?: string };
  const runs: Record<string, Record<number, Stats[]>> = { free: {}, policy: {}, tree: {} };
  const cpu = await cpuMeter(ctx.url);
  const statements: Record<number, Record<Side, number>> = {};
  /** Calls per batch statement in each segment (the batcher sends one call alone to quiesce_gate, not counted). */
  const perBatch: Record<string, Record<number, number[]>> = {};
  try {
    for (const c of ctx.concurrencies) {
      const rounds = Math.max(100, Math.round(ctx.iterations / 4));
      ctx.log(`gate with a policy, ${rounds} statements of ${c} call(s) per side, one connection …`);
      statements[c] = await statementCost(ctx.url, sides, c, rounds, denials);
      const { order, calls } = segments(ctx.iterations, c);
      ctx.log(`gate with a policy, concurrency ${c}: ${order.length} segments of ${calls} calls …`);
      for (const k of order) {
        const ops = sides[k].slice(0, c).map((x) => op(x, denials));
        const done = ((runs[k] ??= {})[c] ??= []);
        const b0 = gateBatchStats();
        done.push(await cpu.measure(`gate, ${k}`, ops, calls, done.length === 0 ? ctx.warmup : c));
        const b1 = gateBatchStats();
        ((perBatch[k] ??= {})[c] ??= []).push((b1.calls - b0.calls) / Math.max(1, b1.batches - b0.batches));
      }
    }
  } finally {
    await cpu.end();
  }
  if (denials.n > 0) throw new Error(`${denials.n} gate calls did not answer allow (last: ${denials.last})`);
  const rows: string[][] = [];
  const verdicts: string[] = [];
  for (const c of ctx.concurrencies) {
    const free = cpu.pooled(runs.free![c]!);
    const st = statements[c]!;
    for (const [k, label] of [
      ["policy", "one policy + one team-wide budget"],
      ["tree", "one policy + one per-tree budget"],
    ] as const) {
      const p = cpu.pooled(runs[k]![c]!);
      const x = p.p50 / free.p50;
      const y = cpu.total(p) / cpu.total(free);
      const z = st[k] / st.free;
      rows.push([
        String(c),
        label,
        ms(st[k]),
        ratio(z),
        ms(p.p50),
        ms(p.p99),
        String(Math.round(p.perSecond)),
        ratio(x),
        us(cpu.total(p)),
        ratio(y),
      ]);
      verdicts.push(
        `concurrency ${c}, ${label}: one statement of ${c} ${ms(st[k])} ms = ${ratio(z)} the policy-free gate's ${ms(st.free)} ms → ${verdict(z)}; as the API process asks, p50 ${ms(p.p50)} ms = ${ratio(x)} → ${verdict(x)} (target ≤ ${POLICY_TARGET_RATIO}×); CPU per decision ${ratio(y)}`,
      );
    }
    if (c > 1) {
      const mean = (k: Side) => (perBatch[k]?.[c] ?? []).reduce((a, b) => a + b, 0) / (perBatch[k]?.[c]?.length || 1);
      verdicts.push(
        `concurrency ${c}, as the API process asks: calls per batch statement ${SIDES.map((k) => `${k === "free" ? "no policy" : k === "policy" ? "team-wide" : "per-tree"} ${mean(k).toFixed(1)}`).join(", ")}`,
      );
    }
    rows.push([
      String(c),
      "no policy (baseline)",
      ms(st.free),
      "1.00×",
      ms(free.p50),
      ms(free.p99),
      String(Math.round(free.perSecond)),
      "1.00×",
      us(cpu.total(free)),
      "1.00×",
    ]);
  }
  return {
    table: {
      title: "The gate with a policy and a budget vs. without",
      columns: [
        "concurrency",
        "measure",
        "one statement of c calls, median ms",
        "÷ no policy",
        "batched p50 ms",
        "p99 ms",
        "per second",
        "p50 ÷ no policy",
        "CPU µs/decision",
        "CPU ÷ no policy",
      ],
      rows,
      notes: [
        ...verdicts,
        `One statement of c calls: one at a time on a connection of its own (quiesce_gate for one call, one quiesce_gate_batch of c calls above — what the batcher sends when c calls arrive at once), the sides interleaved statement by statement, median per statement. As the API process asks: gateCheck on the shared pool (batched), rounds of segments interleaved per concurrency (${ROUND.join(", ")}), ${segments(ctx.iterations, 1).order.length} segments of ${segments(ctx.iterations, 1).calls} calls at concurrency 1 and ${segments(ctx.iterations, 2).order.length} of ${segments(ctx.iterations, 2).calls} above ("policy" is the team-wide budget, "tree" the per-tree one), pooled per side; its p50 also carries the batcher's timing and, where the CPUs are the bound (the API process and the database on 2 CPUs at concurrency 16), follows the CPU per decision (the database backends' and this process's user + system time over the segments' calls, warm-up included) more than the statement's time, of which the commit's flush is a fixed part. Every call is a new operation that the policy step decides and the budget reserves.`,
      ],
    },
    data: { runs, statements, perBatch },
  };
}
