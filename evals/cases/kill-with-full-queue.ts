// Seed 004 "Kill with a full queue", in evals twice over: the drill case (the harness keeps delivering
// every queued job to a worker process after the kill), and the same through a REAL durable queue —
// pg-boss in the same PostgreSQL, consumed by a worker process with the guard (concurrency 1, a long
// job at the head). The kill must stop them in the queue (cancelled) or at dequeue (acknowledged
// without running); none may start.
import { createPgBoss, ensureGuardedQueue, enqueuePgBoss } from "../../lib/agent/queues/pg-boss";
import type { Enqueued } from "../../lib/agent/queues/enqueue";
import { killWithFullQueue } from "../../lib/drill/cases/kill-with-full-queue";
import { check, links, newRun, statusOf } from "../../lib/drill/support";
import { waitUntil } from "../support/proc";
import { Pod } from "../support/pod";
import type { Check, Evidence } from "../../lib/drill/types";
import type { Stack } from "../support/stack";
import type { EvalCase } from "./types";

const BEHIND = 6;

async function throughPgBoss(
  stack: Stack,
): Promise<{ started: number; checks: Check[]; evidence: Evidence[]; facts: Record<string, unknown> }> {
  const ctx = stack.drillContext();
  const agent = ctx.agent!;
  const queue = `evals-${stack.tag}`;
  const boss = createPgBoss({ supervise: false, max: 2 });
  boss.on("error", () => {});
  await boss.start(); // installs pg-boss's schema before the worker process starts
  await ensureGuardedQueue(boss, queue, { redeliveryDelaySeconds: 1 });
  const qpod = new Pod("queue-worker", stack.podEnv({ POD_QUEUE: queue }), stack.logDir);
  await qpod.start();
  try {
    const root = await newRun(ctx, { title: "release payments (pg-boss)" });
    const child = await newRun(ctx, { parentRunId: root.runId, title: "checks (subagent, pg-boss)" });
    const long = await enqueuePgBoss(boss, agent, queue, {
      authority: root,
      tool: "deployment.reserve_preview",
      payload: { job: { kind: "long" } },
    });
    await qpod.proc.waitForLine((l) => l.event === "started" && l.operationId === long.operationId, 60_000, "the long job to start");
    const behind: Enqueued[] = [];
    for (let i = 0; i < BEHIND; i++) {
      behind.push(
        await enqueuePgBoss(boss, agent, queue, {
          authority: i % 2 ? child : root,
          tool: i % 2 ? "ticket.update" : "db.compatibility_check",
          payload: { job: { kind: "quick" } },
          delayMs: i === BEHIND - 1 ? 1000 : 0,
        }),
      );
    }
    const { barrierId } = await ctx.operator.kill(root.runId, "eval: kill with a full pg-boss queue");
    const aborted = await qpod.proc.waitForLine(
      (l) => l.event === "outcome" && l.operationId === long.operationId,
      60_000,
      "the long job's outcome",
    );
    const jobs = await waitUntil(
      "every queued job to end in the queue",
      async () => {
        const js = await Promise.all(behind.map((b) => boss.getJobById<unknown>(queue, b.jobId)));
        return js.every((j) => j?.state === "cancelled" || j?.state === "completed") ? js : null;
      },
      60_000,
      200,
    );
    const late = await statusOf(enqueuePgBoss(boss, agent, queue, { authority: root, tool: "late", payload: { job: { kind: "quick" } } }));
    const startedOps = qpod.proc.lines.filter((l) => l.event === "started").map((l) => l.operationId);
    const started = startedOps.filter((o) => o !== long.operationId).length;
    const ops = await Promise.all(behind.map((b) => ctx.db!.operation(b.operationId)));
    const checks = [
      check("pg-boss: no job behind the long one started", started === 0, startedOps),
      check(
        "pg-boss: the long job was aborted with an unknown outcome",
        aborted.status === "aborted_unknown" && aborted.reason === "killed",
        aborted,
      ),
      check(
        "pg-boss: each job was cancelled in the queue or acknowledged without running",
        jobs.every((j) => j!.state === "cancelled" || (j!.output as { quiesce?: string } | null)?.quiesce === "discarded"),
        jobs.map((j) => `${j!.state}${j!.state === "completed" ? `:${JSON.stringify(j!.output)}` : ""}`),
      ),
      check(
        "pg-boss: every operation is kept as cancelled_not_started",
        ops.every((o) => o?.state === "cancelled_not_started"),
        ops.map((o) => o?.state),
      ),
      check("pg-boss: a producer that never heard of the kill cannot enqueue more (409)", late === 409, late),
    ];
    return {
      started,
      checks,
      evidence: links(ctx, { runId: root.runId, barrierId }),
      facts: { queue, jobStates: jobs.map((j) => j!.state) },
    };
  } finally {
    await qpod.close();
    await boss.stop({ graceful: false, wait: true }).catch(() => {});
  }
}

export const killWithFullQueueEval: EvalCase = {
  ...killWithFullQueue,
  summary: `${killWithFullQueue.summary}; in evals also through a real pg-boss queue consumed by a worker process`,
  needs: [],
  async run(stack) {
    const delivered = await killWithFullQueue.run(stack.drillContext());
    const pg = await throughPgBoss(stack);
    const none = delivered.observed === "none_started" && pg.started === 0;
    return {
      observed: none ? "none_started" : `${delivered.observed}/pg-boss:${pg.started}_started`,
      checks: [...delivered.checks, ...pg.checks],
      evidence: [...delivered.evidence, ...pg.evidence],
      facts: { delivered: delivered.facts, pgBoss: pg.facts },
    };
  },
};
