// Fair share between teams in the gate batcher (docs/gate.md#fair-share): team B's gate latency on its
// own, and while team A floods the same process's batcher with many more callers: with the batcher
// serving calls first come, first served (as before fair share), round-robin by team without a cap, and
// round-robin with the team cap (QUIESCE_GATE_TEAM_INFLIGHT). Both figures of a ratio come from the same
// run, interleaved (alone, flood, flood, alone), and are pooled. Reported, never asserted.
import type { BenchSection } from "./lib/section";
import { measure, pooled, type Op, type Stats } from "./lib/measure";
import { ms, ratio, type BenchTable } from "./lib/report";
import { gateBatcher, type GateInput, type GateOutcome } from "../lib/modules/gate/statement";
import { setting } from "../lib/platform/config";
import { createApiKey } from "../lib/modules/keys/api-keys";
import { ensureTeam } from "../lib/modules/members/admin-directory";
import { createRun } from "../lib/modules/runs/register/create-run";
import { hashKeySecret } from "../lib/platform/auth/api-key";
import { newId } from "../lib/platform/ids";

const SYSTEM = { type: "system", name: "bench" } as const;
/** Team B: a few agents asking at their own pace. Team A: a flood of callers that never pause. */
const B_CALLERS = 4;
const A_CALLERS = 256;

interface Caller {
  keyHash: string;
  runId: string;
  leaseId: string;
  epoch: number;
}

async function team(slug: string, callers: number): Promise<Caller[]> {
  const t = (await ensureTeam(SYSTEM, { slug: `${slug}-${process.pid}`, name: slug })).team;
  const key = await createApiKey(SYSTEM, { teamId: t.id, kind: "agent", name: `${slug} agent` });
  const keyHash = hashKeySecret(key.secret);
  const out: Caller[] = [];
  for (let i = 0; i < callers; i++) {
    const run = await createRun(SYSTEM, { taskId: `${slug}-${i}`, teamId: t.id, leaseTtlSeconds: 3600 });
    out.push({ keyHash, runId: run.runId, leaseId: run.leaseId, epoch: run.epoch });
  }
  return out;
}

type Ask = (i: GateInput) => Promise<GateOutcome>;
const denials = { n: 0, last: "" };
async function askOnce(ask: Ask, c: Caller): Promise<void> {
  const out = await ask({ ...c, operationId: newId("op"), tool: "bench.fair" });
  if (!out.ok || out.decision !== "allow") {
    denials.n++;
    denials.last = JSON.stringify(out);
  }
}

/** Team B's calls, measured, optionally while team A's callers ask without pause on the same batcher. */
async function teamB(ask: Ask, b: Caller[], a: Caller[] | null, iterations: number, warmup: number) {
  let stop = false;
  let flooded = 0;
  const flood = (a ?? []).map(async (c) => {
    while (!stop) {
      await askOnce(ask, c);
      flooded++;
    }
  });
  const started = performance.now();
  const ops: Op[] = b.map((c) => () => askOnce(ask, c));
  const stats = await measure(a ? "B while A floods" : "B alone", ops, iterations, warmup);
  stop = true;
  await Promise.all(flood);
  return { stats, aPerSecond: a ? (flooded / (performance.now() - started)) * 1000 : 0 };
}

export const fairShareSection: BenchSection = {
  name: "fair-share",
  title: "team B's gate p99 alone and while team A floods the batcher (first come first served vs fair share)",
  async run(ctx) {
    const b = await team("bench-b", B_CALLERS);
    const a = await team("bench-a", A_CALLERS);
    const inFlight = setting("QUIESCE_GATE_BATCH_INFLIGHT");
    const cap = setting("QUIESCE_GATE_TEAM_INFLIGHT") || 32;
    const n = Math.max(200, Math.round(ctx.iterations / 4));
    const modes = [
      { name: "first come, first served (before fair share)", tag: "fifo", fair: "fifo" as const },
      { name: "round-robin by team, no team cap", tag: "round-robin", fair: { teamCap: 0 } },
      { name: `fair share: round-robin by team, team cap ${cap} (QUIESCE_GATE_TEAM_INFLIGHT)`, tag: "fair", fair: { teamCap: cap } },
    ];
    const rows: string[][] = [];
    const data: unknown[] = [];
    for (const mode of modes) {
      const ask = gateBatcher(Math.max(1, inFlight), setting("QUIESCE_GATE_BATCH_HOLD_MS"), mode.fair);
      // Warm-up: prepared statements on the gate pool, and the fair batcher's key → team lookups.
      for (const c of [...a, ...b]) await askOnce(ask, c);
      const alone: Stats[] = [];
      const flooded: Stats[] = [];
      const aRates: number[] = [];
      for (const side of ["alone", "flood", "flood", "alone"] as const) {
        ctx.log(`fair-share: ${mode.tag}, team B ${side === "alone" ? "alone" : `while ${A_CALLERS} team A callers flood`}`);
        const r = await teamB(ask, b, side === "flood" ? a : null, n, Math.min(ctx.warmup, 50));
        (side === "alone" ? alone : flooded).push(r.stats);
        if (side === "flood") aRates.push(r.aPerSecond);
      }
      const bAlone = pooled(alone);
      const bFlooded = pooled(flooded);
      const aRate = aRates.reduce((s, x) => s + x, 0) / aRates.length;
      rows.push([
        mode.name,
        ms(bAlone.p50),
        ms(bAlone.p99),
        ms(bFlooded.p50),
        ms(bFlooded.p99),
        ratio(bFlooded.p99 / bAlone.p99),
        String(Math.round(aRate)),
      ]);
      data.push({ mode: mode.name, alone: bAlone, flooded: bFlooded, aPerSecond: aRate });
    }
    if (denials.n > 0) throw new Error(`${denials.n} gate calls were not allowed (last: ${denials.last})`);
    const table: BenchTable = {
      title: `Gate fair share: team B (${B_CALLERS} callers) alone and while team A (${A_CALLERS} callers) floods one process's batcher`,
      columns: [
        "batcher",
        "B p50 alone (ms)",
        "B p99 alone (ms)",
        "B p50 flooded (ms)",
        "B p99 flooded (ms)",
        "B p99 flooded / alone",
        "A decisions/s",
      ],
      rows,
      notes: [
        `In process, on the gate pool: ${n} of team B's calls per round, rounds alone, flood, flood, alone pooled; ${inFlight} statements in flight, batches of at most ${setting("QUIESCE_GATE_BATCH_MAX")}.`,
        "The ratio compares team B's p99 with team A flooding to its p99 alone in the same run; a lower ratio means A's flood costs B less.",
      ],
    };
    return { tables: [table], data };
  },
};
