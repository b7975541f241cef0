// The gate with the team's policy in it (docs/policies.md): one active policy (a require_approval rule that
// does not match the calls, so every call is decided through the policy step and allowed) and one budget
// (every call reserves one `calls` against it), against the same gate for a team without a policy — both as
// the API process asks (the shared pool, batched), interleaved A B B A per concurrency in the same run.
// Target: the policy's gate p50 within 1.2× of the policy-free gate's. Reported, never asserted.
import { gateCheck } from "../lib/modules/gate/statement";
import { createApiKey } from "../lib/modules/keys/api-keys";
import { ensureTeam } from "../lib/modules/members/admin-directory";
import { createPolicyVersion, enablePolicy } from "../lib/modules/policy";
import { createRun } from "../lib/modules/runs/register/create-run";
import { hashKeySecret } from "../lib/platform/auth/api-key";
import type { Principal } from "../lib/platform/auth/principal";
import { newId } from "../lib/platform/ids";
import { measure, pooled, type Op, type Stats } from "./lib/measure";
import { ms, ratio, type BenchTable } from "./lib/report";

const SYSTEM = { type: "system", name: "bench" } as const;
export const POLICY_TARGET_RATIO = 1.2;
const ORDER = ["free", "policy", "policy", "free"] as const;

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

export async function policyGateAb(ctx: {
  concurrencies: number[];
  iterations: number;
  warmup: number;
  log: (l: string) => void;
}): Promise<{ table: BenchTable; data: Record<string, Record<number, Stats[]>> }> {
  const maxC = Math.max(...ctx.concurrencies);
  const sides = {
    free: await team("policy-free", maxC),
    policy: await team("policy-team-budget", maxC, "team"),
    tree: await team("policy-tree-budget", maxC, "run_tree"),
  };
  const denials = { n: 0 } as { n: number; last?: string };
  const runs: Record<string, Record<number, Stats[]>> = { free: {}, policy: {}, tree: {} };
  for (const c of ctx.concurrencies) {
    ctx.log(`gate with a policy, concurrency ${c}: ${ORDER.length} segments of ${ctx.iterations} calls per side …`);
    for (const k of [...ORDER, "tree", "free", "free", "tree"] as const) {
      const ops = sides[k].slice(0, c).map((x) => op(x, denials));
      const done = ((runs[k] ??= {})[c] ??= []);
      done.push(await measure(`gate, ${k}`, ops, ctx.iterations, done.length === 0 ? ctx.warmup : c));
    }
  }
  if (denials.n > 0) throw new Error(`${denials.n} gate calls did not answer allow (last: ${denials.last})`);
  const rows: string[][] = [];
  const verdicts: string[] = [];
  for (const c of ctx.concurrencies) {
    const free = pooled(runs.free![c]!);
    for (const [k, label] of [
      ["policy", "one policy + one team-wide budget"],
      ["tree", "one policy + one per-tree budget"],
    ] as const) {
      const p = pooled(runs[k]![c]!);
      const x = p.p50 / free.p50;
      rows.push([String(c), label, ms(p.p50), ms(p.p99), String(Math.round(p.perSecond)), ratio(x)]);
      verdicts.push(
        `concurrency ${c}: ${label} p50 ${ms(p.p50)} ms = ${ratio(x)} the policy-free gate's ${ms(free.p50)} ms → ${x <= POLICY_TARGET_RATIO ? "PASS" : "MISS"} (target ≤ ${POLICY_TARGET_RATIO}×)`,
      );
    }
    rows.push([String(c), "no policy (baseline)", ms(free.p50), ms(free.p99), String(Math.round(free.perSecond)), "1.00×"]);
  }
  return {
    table: {
      title: "The gate with a policy and a budget vs. without (shared pool, batched)",
      columns: ["concurrency", "measure", "p50 ms", "p99 ms", "per second", "p50 ÷ no-policy p50"],
      rows,
      notes: [
        ...verdicts,
        `Segments of ${ctx.iterations} calls per side, interleaved per concurrency (no policy, team budget, team budget, no policy, tree budget, no policy, no policy, tree budget), pooled per side. Every call is a new operation that the policy step decides and the budget reserves.`,
      ],
    },
    data: runs,
  };
}
