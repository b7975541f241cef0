// A separate OS process for test/gate/race.test.ts: hammers gateCheck over its own pg connection(s)
// (its own gate pool and batcher: with QUIESCE_GATE_BATCH_INFLIGHT=1 its loops' calls are decided in batches)
// with fresh operationIds on the runs of one tree until told to stop ("stop" on stdin), then writes
// every call it made (client-side start/end time, answer) to the file named in RACE_CONFIG.out.
// Run with: tsx --conditions=react-server test/gate/race-worker.ts  (RACE_CONFIG JSON in the env)
import { writeFileSync } from "node:fs";
import { createInterface } from "node:readline";
import { gateBatchStats, gateCheck } from "../../lib/modules/gate/statement";
import { closePool } from "../../lib/platform/db/pool";

interface Config {
  label: string;
  keyHash: string;
  runs: { runId: string; leaseId: string; epoch: number }[];
  out: string;
  loops: number;
}
export interface CallRecord {
  operationId: string;
  runId: string;
  t0: number;
  t1: number;
  decision: string;
  reason: string;
}

const cfg = JSON.parse(process.env.RACE_CONFIG ?? "{}") as Config;
const records: CallRecord[] = [];
let stopping = false;
let n = 0;

const rl = createInterface({ input: process.stdin });
rl.on("line", (l) => {
  if (l.trim() === "stop") stopping = true;
});
process.stdin.on("end", () => {
  stopping = true;
});

async function loop(loopNo: number): Promise<void> {
  let i = 0;
  while (!stopping) {
    const run = cfg.runs[(i + loopNo) % cfg.runs.length]!;
    const operationId = `${cfg.label}-${loopNo}-${i++}`;
    const t0 = Date.now();
    const o = await gateCheck({
      keyHash: cfg.keyHash,
      runId: run.runId,
      leaseId: run.leaseId,
      epoch: run.epoch,
      operationId,
      tool: "race",
    });
    const t1 = Date.now();
    if (!o.ok) throw new Error(`gate refused the key: ${o.code}`);
    records.push({ operationId, runId: run.runId, t0, t1, decision: o.decision, reason: o.reason });
    if (++n % 5 === 0) process.stdout.write(`progress ${n}\n`);
  }
}

try {
  await Promise.all(Array.from({ length: cfg.loops }, (_, k) => loop(k)));
  writeFileSync(cfg.out, JSON.stringify(records));
  // how many of the calls were decided in batches of two or more (QUIESCE_GATE_BATCH_INFLIGHT in the env)
  const b = gateBatchStats();
  process.stdout.write(`done ${records.length} batched ${b.calls} in ${b.batches}\n`);
} finally {
  rl.close();
  process.stdin.destroy();
  await closePool();
}
