// A race that really races. Three separate OS processes, each with its own PostgreSQL
// connections, hammer quiesce_gate on one run tree (root → 2 children → grandchild) with fresh
// operationIds while this test commits pause → resume cycles and then a kill, each as a control write
// under the tree's EXCLUSIVE advisory lock. Asserted from the database afterwards:
//  - no `allow` is recorded for the tree while it is paused (between each pause's commit and the
//    matching resume), nor after the kill's commit point; and the set of allow rows seen under the
//    resume's lock equals the set seen under the pause's lock (exact, no clocks involved);
//  - the running operations after the race are exactly those the kill saw as running under its lock
//    ("either the barrier sees the operation as running, or the operation is denied — never neither");
//  - every operation ends in exactly one state that matches the answer its caller got;
//  - every call that started after a pause returned (and ended before the resume) was held, and every
//    call that started after the kill returned was denied.
// How to read it and why it fails without the lock: docs/gate-tests.md#the-race-test-testgateracetestts.
import { afterAll, expect, test } from "vitest";
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { prisma } from "../../lib/platform/db/prisma";
import { lockRunTreeExclusive, lockTeamScopesExclusive } from "../../lib/platform/db/locks";
import { newId } from "../../lib/platform/ids";
import { makeChain, makeKey, makeRun, makeTeam } from "../support/fixtures";
import type { CallRecord } from "./race-worker";
import { sleep } from "../../lib/platform/wait";

const WORKERS = 3;
const LOOPS_PER_WORKER = 2;
const BATCHED_LOOPS_PER_WORKER = 6;
const PAUSE_CYCLES = 4;
const ROOT = path.resolve(import.meta.dirname, "../..");
const dir = mkdtempSync(path.join(tmpdir(), "quiesce-race-"));
const children: ChildProcess[] = [];

afterAll(async () => {
  for (const c of children) if (c.exitCode === null) c.kill("SIGKILL");
  rmSync(dir, { recursive: true, force: true });
  await prisma().$disconnect();
});

interface Worker {
  proc: ChildProcess;
  calls: number;
  /** calls decided in batches of two or more (reported when the worker ends) */
  batchedCalls: number;
  done: Promise<void>;
  out: string;
}

function startWorker(label: string, cfg: object, batched: boolean): Worker {
  const out = path.join(dir, `${label}.json`);
  const proc = spawn(path.join(ROOT, "node_modules/.bin/tsx"), ["--conditions=react-server", path.join(ROOT, "test/gate/race-worker.ts")], {
    cwd: ROOT,
    env: {
      ...process.env,
      // Unbatched: every call is its own quiesce_gate statement. Batched: one statement in flight per
      // process, so the loops' calls that arrive meanwhile go together as one quiesce_gate_batch call.
      QUIESCE_GATE_BATCH_INFLIGHT: batched ? "1" : "0",
      RACE_CONFIG: JSON.stringify({ ...cfg, label, out, loops: batched ? BATCHED_LOOPS_PER_WORKER : LOOPS_PER_WORKER }),
    },
    stdio: ["pipe", "pipe", "pipe"],
  });
  children.push(proc);
  const w: Worker = { proc, calls: 0, batchedCalls: 0, out, done: Promise.resolve() };
  let stderr = "";
  proc.stderr!.on("data", (d) => {
    stderr += String(d);
  });
  proc.stdout!.on("data", (d: Buffer) => {
    for (const m of String(d).matchAll(/progress (\d+)/g)) w.calls = Math.max(w.calls, Number(m[1]));
    for (const m of String(d).matchAll(/batched (\d+) in (\d+)/g)) if (Number(m[2]) > 0) w.batchedCalls = Number(m[1]);
  });
  w.done = new Promise((resolve, reject) =>
    proc.on("exit", (code) => (code === 0 ? resolve() : reject(new Error(`${label} exited ${code}: ${stderr}`)))),
  );
  return w;
}

/** Waits (a liveness guard, not a timing assertion) until every worker made `more` calls past its mark. */
async function eachMakes(workers: Worker[], more: number): Promise<void> {
  const marks = workers.map((w) => w.calls);
  const deadline = Date.now() + 60_000;
  while (workers.some((w, i) => w.calls < marks[i]! + more)) {
    if (Date.now() > deadline) throw new Error("workers stopped making progress");
    for (const w of workers) if (w.proc.exitCode !== null) throw new Error("a worker exited early");
    await sleep(20);
  }
}

type Ts = string; // clock_timestamp()::text, microsecond precision

type Tx = Parameters<Parameters<ReturnType<typeof prisma>["$transaction"]>[0]>[0];

/** A control write under the tree's exclusive lock, or (`{ team }`) under the team's stop-scope lock. */
async function controlWrite<T>(lock: string | { team: string }, body: (tx: Tx) => Promise<T>) {
  return prisma().$transaction(
    async (tx) => {
      if (typeof lock === "string") await lockRunTreeExclusive(tx, lock);
      else await lockTeamScopesExclusive(tx, lock.team);
      const locked = (await tx.$queryRawUnsafe<{ t: Ts }[]>("SELECT clock_timestamp()::text AS t"))[0]!.t;
      const result = await body(tx);
      // the last statement before COMMIT: the commit point is after this instant
      const commit = (await tx.$queryRawUnsafe<{ t: Ts }[]>("SELECT clock_timestamp()::text AS t"))[0]!.t;
      return { result, locked, commit };
    },
    { timeout: 60_000, maxWait: 60_000 },
  );
}

const allowIds = (tx: { $queryRawUnsafe: <R>(q: string, ...v: unknown[]) => Promise<R> }, tree: string[]) =>
  tx
    .$queryRawUnsafe<{ id: bigint }[]>("SELECT id FROM gate_decisions WHERE run_id = ANY($1) AND decision = 'allow' ORDER BY id", tree)
    .then((rows) => rows.map((r) => String(r.id)));

/** The function's current definition (its source file, CONTRIBUTING.md#a-sql-function). */
const gateSource = (name: string) => readFileSync(path.resolve(import.meta.dirname, `../../lib/gate/sql/${name}.sql`), "utf8");

/**
 * Mutation check, opt-in: RACE_MUTANT=no-lock reinstalls quiesce_gate in THIS test database without its
 * shared tree lock, to show the assertions below catch the race the lock prevents (docs/gate.md).
 */
async function installMutant(): Promise<void> {
  if (process.env.RACE_MUTANT === "no-lock-batch") {
    // the batch without its locks (the calls it hands to quiesce_gate still take theirs)
    const sql = gateSource("quiesce_gate_batch");
    const mutant = sql.replace(/PERFORM pg_advisory_xact_lock_shared\((?:7114, )?t\.key\)/g, "PERFORM t.key");
    if (mutant === sql) throw new Error("mutant: batch lock statements not found");
    await prisma().$executeRawUnsafe(mutant);
    return;
  }
  if (process.env.RACE_MUTANT !== "no-lock") return;
  const sql = gateSource("quiesce_gate");
  const mutant = sql.replace(/PERFORM pg_advisory_xact_lock_shared\(hashtextextended\(v_root, 0\)\);/, "-- lock removed by RACE_MUTANT");
  if (mutant === sql) throw new Error("mutant: lock statement not found");
  await prisma().$executeRawUnsafe(mutant);
}

interface Scenario {
  label: string;
  /** What each control write locks: the run tree (root run id) or the team's stop scopes. */
  lock(root: string, teamId: string): string | { team: string };
  /** Writes the pause inside the locked transaction; returns what resume needs (e.g. the scope id). */
  pause(tx: Tx, ctx: RaceContext): Promise<string>;
  resume(tx: Tx, ctx: RaceContext, paused: string): Promise<void>;
  kill(tx: Tx, ctx: RaceContext): Promise<void>;
  /** Reasons a call that began after the kill returned may be denied with. */
  killReasons: string[];
  /** Checks of this scenario alone, after the shared ones. */
  after?(ctx: RaceContext): Promise<void>;
  /** The workers' calls are decided in batches (quiesce_gate_batch) instead of one statement each. */
  batched?: boolean;
}

interface RaceContext {
  teamId: string;
  root: string;
  tree: string[];
}

type Window = { pauseCommit: Ts; pauseReturned: number; resumeStarted: number; resumeLocked: Ts; atPause: string[]; atResume: string[] };

/**
 * The harness both races share: a run tree (root → child → grandchild, plus a sibling), WORKERS real
 * processes calling the gate on it, PAUSE_CYCLES pause → resume control writes, then a kill, each
 * under the scenario's lock; then the shared assertions (module comment) from the database and the
 * callers' records.
 */
async function race(s: Scenario): Promise<void> {
  const team = await makeTeam(s.label);
  const key = await makeKey(team.teamId, { kind: "worker" });
  const [root, child, grandchild] = await makeChain(team.teamId, [{}, {}, {}]);
  const sibling = await makeRun(team.teamId, {}, root);
  const treeRuns = [root!, child!, sibling, grandchild!];
  const ctx: RaceContext = { teamId: team.teamId, root: root!.runId, tree: treeRuns.map((r) => r.runId) };
  const { tree } = ctx;
  const lock = s.lock(ctx.root, ctx.teamId);
  const cfg = { keyHash: key.hash, runs: treeRuns.map((r) => ({ runId: r.runId, leaseId: r.leaseId, epoch: r.epoch })) };

  const workers = Array.from({ length: WORKERS }, (_, i) => startWorker(`${s.label}-w${i}`, cfg, s.batched === true));
  const dbg = (m: string) =>
    process.env.RACE_DEBUG && console.error(new Date().toISOString(), s.label, m, workers.map((w) => w.calls).join(","));
  dbg("started");
  await eachMakes(workers, 20);
  dbg("warm");

  const windows: Window[] = [];
  for (let k = 0; k < PAUSE_CYCLES; k++) {
    const pause = await controlWrite(lock, async (tx) => {
      const seen = await allowIds(tx, tree);
      return { seen, paused: await s.pause(tx, ctx) };
    });
    const pauseReturned = Date.now();
    dbg(`paused ${k}`);
    await eachMakes(workers, 10);
    const resumeStarted = Date.now();
    const resume = await controlWrite(lock, async (tx) => {
      const seen = await allowIds(tx, tree);
      await s.resume(tx, ctx, pause.result.paused);
      return seen;
    });
    dbg(`resumed ${k}`);
    windows.push({
      pauseCommit: pause.commit,
      pauseReturned,
      resumeStarted,
      resumeLocked: resume.locked,
      atPause: pause.result.seen,
      atResume: resume.result,
    });
    await eachMakes(workers, 10);
  }

  const kill = await controlWrite(lock, async (tx) => {
    const running = await tx.operation.findMany({ where: { runId: { in: tree }, state: "running" }, select: { operationId: true } });
    await s.kill(tx, ctx);
    return running.map((r) => r.operationId).sort();
  });
  const killReturned = Date.now();
  dbg("killed");
  await eachMakes(workers, 10);
  for (const w of workers) w.proc.stdin!.end("stop\n");
  await Promise.all(workers.map((w) => w.done));
  const calls: CallRecord[] = workers.flatMap((w) => JSON.parse(readFileSync(w.out, "utf8")) as CallRecord[]);

  // 1. no allow while paused: exact (allow rows under the resume's lock = under the pause's lock) …
  for (const w of windows) expect.soft(w.atResume).toEqual(w.atPause);
  // … and by the recorded decision times (timestamptz(3), so both bounds are rounded the same way).
  for (const w of windows) {
    const [row] = await prisma().$queryRawUnsafe<{ n: bigint }[]>(
      "SELECT count(*) AS n FROM gate_decisions WHERE run_id = ANY($1) AND decision = 'allow' AND at > $2::timestamptz(3) AND at < $3::timestamptz(3)",
      tree,
      w.pauseCommit,
      w.resumeLocked,
    );
    expect.soft(Number(row!.n)).toBe(0);
  }
  // 2. no allow after the kill's commit point, and nothing became running that the kill did not see.
  const [lateRow] = await prisma().$queryRawUnsafe<{ late: bigint }[]>(
    "SELECT count(*) AS late FROM gate_decisions WHERE run_id = ANY($1) AND decision = 'allow' AND at > $2::timestamptz(3)",
    tree,
    kill.commit,
  );
  expect.soft(Number(lateRow!.late)).toBe(0);
  const runningAfter = (
    await prisma().operation.findMany({ where: { runId: { in: tree }, state: "running" }, select: { operationId: true } })
  )
    .map((r) => r.operationId)
    .sort();
  expect.soft(runningAfter).toEqual(kill.result);

  // 3. every operation ends in exactly one state, matching what its caller was told.
  const ops = await prisma().operation.findMany({ where: { runId: { in: tree } }, select: { operationId: true, state: true } });
  const byOp = new Map(ops.map((o) => [o.operationId, o.state]));
  expect.soft(byOp.size).toBe(ops.length);
  for (const c of calls) {
    const want = c.decision === "allow" ? "running" : c.decision === "deny" ? "denied" : undefined;
    expect.soft({ op: c.operationId, state: byOp.get(c.operationId) }).toEqual({ op: c.operationId, state: want });
  }
  expect.soft(ops.length).toBe(calls.filter((c) => c.decision !== "hold").length);

  // 4. client side: calls that began after a pause returned (and ended before its resume began) were held;
  //    calls that began after the kill returned were denied for the kill.
  for (const w of windows) {
    const inside = calls.filter((c) => c.t0 > w.pauseReturned && c.t1 < w.resumeStarted);
    expect.soft(inside.length).toBeGreaterThan(0);
    for (const c of inside) expect.soft(c.decision).toBe("hold");
  }
  const afterKill = calls.filter((c) => c.t0 > killReturned);
  expect.soft(afterKill.length).toBeGreaterThan(0);
  for (const c of afterKill) {
    expect.soft(c.decision).toBe("deny");
    expect.soft(s.killReasons).toContain(c.reason);
  }

  await s.after?.(ctx);
  // The batched races really batched: most calls were decided in batches of two or more.
  const batchedCalls = workers.reduce((n, w) => n + w.batchedCalls, 0);
  if (s.batched) expect(batchedCalls).toBeGreaterThan(calls.length / 2);
  else expect(batchedCalls).toBe(0);

  // The race really raced: allows before the first pause and after each resume, holds, denies.
  expect([...new Set(calls.map((c) => c.decision))].sort()).toEqual(["allow", "deny", "hold"]);
  const overlapping = windows.reduce((n, w) => n + calls.filter((c) => c.t0 < w.pauseReturned && c.t1 > w.pauseReturned).length, 0);
  console.info(
    `race (${s.label}): ${calls.length} gate calls from ${WORKERS} processes (${batchedCalls} in batches), ${kill.result.length} running at the kill, ${overlapping} calls in flight across the ${PAUSE_CYCLES} pause commits`,
  );
}

// Each race twice: every call its own quiesce_gate statement, and the calls decided in batches
// (quiesce_gate_batch, docs/gate.md#batches) racing the same control writes.
for (const batched of [false, true]) {
  test(
    `pause and kill committed while three processes hammer the gate${batched ? " in batches" : ""}: no allow slips past either`,
    async () => {
      await installMutant();
      await race({
        batched,
        label: batched ? "race-batched" : "race",
        lock: (root) => root,
        pause: async (tx, { root }) => {
          await tx.run.update({
            where: { id: root },
            data: { lifecycle: "paused", lifecycleReason: "race test", lifecycleChangedAt: new Date() },
          });
          return root;
        },
        resume: async (tx, { root }) => {
          await tx.run.update({ where: { id: root }, data: { lifecycle: "normal", lifecycleReason: "race test resume" } });
        },
        // The minimal tree kill (the barrier's full transaction lives in lib/modules/stop/kill.ts): lifecycle killed
        // and epoch + 1 on every run of the tree, every lease revoked, under the exclusive tree lock.
        kill: async (tx, { root, tree }) => {
          await tx.$executeRawUnsafe(
            "UPDATE runs SET lifecycle = 'killed', epoch = epoch + 1, lifecycle_reason = 'race test kill' WHERE root_run_id = $1",
            root,
          );
          await tx.$executeRawUnsafe(
            "UPDATE leases SET revoked_at = now(), revoked_by = 'race-test' WHERE run_id = ANY($1) AND revoked_at IS NULL",
            tree,
          );
        },
        killReasons: ["killed", "parent_revoked"],
      });
    },
    Number(process.env.RACE_TIMEOUT_MS ?? 180_000),
  );

  // The same race for stop scopes (docs/fleet-stop.md): the scope is ONE row written under the team's
  // EXCLUSIVE stop-scope lock, never a change to any run. A pause scope naming only the root (it applies
  // to the subtree through the ancestry) is committed and lifted in cycles, then a whole-team kill scope.
  test(
    `pause and kill SCOPES committed while three processes hammer the gate${batched ? " in batches" : ""}: no allow slips past either`,
    async () => {
      const scopeRow = (teamId: string, action: "pause" | "kill", runIds?: string[]) => ({
        id: newId("scope"),
        teamId,
        action,
        filter: runIds ? { runIds } : {},
        fRunIds: runIds,
        reason: "race test",
        requestedBy: "race-test",
      });
      await installMutant();
      await race({
        batched,
        label: batched ? "race-scope-batched" : "race-scope",
        lock: (_root, team) => ({ team }),
        pause: async (tx, { teamId, root }) => (await tx.stopScope.create({ data: scopeRow(teamId, "pause", [root]) })).id,
        resume: async (tx, _ctx, scopeId) => {
          await tx.stopScope.update({ where: { id: scopeId }, data: { liftedAt: new Date(), liftedBy: "race-test" } });
        },
        kill: async (tx, { teamId }) => {
          await tx.stopScope.create({ data: scopeRow(teamId, "kill") });
        },
        killReasons: ["killed"],
        // No run was touched: the scope alone stopped them.
        after: async ({ tree }) => {
          expect((await prisma().run.findMany({ where: { id: { in: tree } } })).every((r) => r.lifecycle === "normal")).toBe(true);
        },
      });
    },
    Number(process.env.RACE_TIMEOUT_MS ?? 180_000),
  );
}
