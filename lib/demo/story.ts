// One simulated release agent playing the barrier article's (docs/ideas.md#barriers) story: "Claude Code starts
// a release task. One MCP
// call asks the deployment service for a preview. Another queues a database compatibility check. A
// subagent prepares a ticket update." Plus the scheduled work a kill must also cancel (a delayed
// re-check, a delayed ticket publish, retries of a failed check).
//
// It behaves like a well-behaved agent: it asks the gate before every action, waits on a hold and
// asks again (a fresh decision each time), stops a branch on a deny, and reports what happened —
// including "aborted, outcome unknown" when a kill interrupts the preview.
import { randomBytes } from "node:crypto";
import type { QuiesceClient } from "../agent/sdk/client";
import type { CreateRunResponse } from "../schemas/runs";
import { newId } from "../platform/ids";
import type { SimProviderClient } from "../modules/stop";
import type { SimMode } from "../modules/stop";
import type { WorkerGuard } from "../agent/sdk/worker";
import { between, isTransient, pause, pick, withBackoff, type Outage } from "./backoff";
import { DEMO_QUEUES, type DemoQueues } from "./queues";

export interface StoryContext {
  agent: QuiesceClient;
  /** Guard for the agent's own long call (the preview), on the agent's key. */
  agentGuard: WorkerGuard;
  queues: DemoQueues;
  sim: SimProviderClient;
  outage: Outage;
  signal: AbortSignal;
  log: (m: string) => void;
}

type Run = Pick<CreateRunResponse, "runId" | "leaseId" | "epoch">;
/** Only the authority fields: the API's bodies are strict. */
const auth = (r: Run): Run => ({ runId: r.runId, leaseId: r.leaseId, epoch: r.epoch });

/** Provider behaviours, weighted toward the clean case, so receipts of every kind show up. */
const MODES: SimMode[] = ["cancel_cleanly", "cancel_cleanly", "cancel_cleanly", "cancel_cleanly", "commit_during_cancel", "status_down"];

export async function playRelease(ctx: StoryContext): Promise<string> {
  const sha = randomBytes(4).toString("hex").slice(0, 7);
  const b = <T>(fn: () => Promise<T>) => withBackoff(fn, ctx.outage, ctx.signal);
  const root = await b(() =>
    ctx.agent.createRun({
      taskId: `release-payments-${sha}`,
      title: `Release payments ${sha}`,
      harness: "claude_code",
      leaseTtlSeconds: 2 * 3600,
    }),
  );
  const log = (m: string) => ctx.log(`${root.runId} release-payments-${sha}: ${m}`);
  log("release run started");
  if (!(await call(ctx, root, "repo.read_diff", log))) return root.runId;

  // The release's subagents: child runs of the same task, so a kill of the release reaches them.
  const subagent = (title: string) =>
    b(() => ctx.agent.createRun({ taskId: `release-payments-${sha}`, title, parentRunId: root.runId, harness: "claude_code" }));
  const checks = await subagent("Database compatibility checks");
  const ticket = await subagent("Ticket update (subagent)");

  await Promise.all([
    preview(ctx, root, log),
    b(() =>
      ctx.queues.enqueue(DEMO_QUEUES.checks, {
        authority: auth(checks),
        tool: "db.compatibility_check",
        payload: { label: "compatibility check", durationMs: between(15_000, 35_000), failFirst: Math.random() < 0.4, effectId: "dbcheck" },
      }),
    ).then(() => log("queued the database compatibility check")),
    b(() =>
      ctx.queues.enqueue(DEMO_QUEUES.checks, {
        authority: auth(checks),
        tool: "db.compatibility_recheck",
        delayMs: between(60_000, 120_000),
        payload: { label: "scheduled re-check", durationMs: between(5_000, 10_000), effectId: "dbrecheck" },
      }),
    ),
    (async () => {
      if (!(await call(ctx, ticket, "ticket.prepare_update", log))) return;
      await b(() =>
        ctx.queues.enqueue(DEMO_QUEUES.ticket, {
          authority: auth(ticket),
          tool: "ticket.publish_update",
          delayMs: between(40_000, 80_000),
          payload: { label: `ticket PAY-${between(1000, 9999)} update`, durationMs: between(3_000, 8_000), effectId: "ticket" },
        }),
      );
      log("scheduled the ticket update");
    })(),
  ]).catch((err) => {
    if (!ctx.signal.aborted) log(`branch ended: ${(err as Error).message}`);
  });
  return root.runId;
}

/** A quick tool call: ask, wait out holds (asking again), act only on allow, report the outcome. */
async function call(ctx: StoryContext, run: Run, tool: string, log: (m: string) => void): Promise<boolean> {
  const operationId = newId("op");
  let wait = 2000;
  let said = false;
  for (;;) {
    if (ctx.signal.aborted) return false;
    const d = await withBackoff(() => ctx.agent.gate({ ...auth(run), operationId, tool }), ctx.outage, ctx.signal);
    if (d.decision === "allow") break;
    if (d.decision === "deny") {
      log(`${tool} denied (${d.reason}); stopping this branch`);
      return false;
    }
    if (!said) {
      log(`${tool} held (${d.reason}); waiting`);
      said = true;
    }
    await pause(wait, ctx.signal);
    wait = Math.min(wait * 2, 30_000);
  }
  await pause(between(300, 1500), ctx.signal);
  await withBackoff(() => ctx.agent.complete(operationId, { outcome: "succeeded" }), ctx.outage, ctx.signal).catch(() => {});
  return true;
}

/** The preview reservation: a long call to the simulated deployment provider, under an abort token. */
async function preview(ctx: StoryContext, root: Run, log: (m: string) => void): Promise<void> {
  const operationId = newId("op");
  const jobId = `preview-${randomBytes(3).toString("hex")}`;
  const mode = pick(MODES);
  await withBackoff(
    () =>
      ctx.agent.registerOperation({
        ...auth(root),
        operationId,
        kind: "queued",
        tool: "deployment.reserve_preview",
        providerName: "deploy-sim",
        providerJobId: jobId,
      }),
    ctx.outage,
    ctx.signal,
  );
  let out;
  let wait = 1000;
  for (;;) {
    try {
      out = await ctx.agentGuard.run(
        { ...auth(root), operationId },
        async (job) => {
          await ctx.sim.createJob({
            jobId,
            mode,
            commitAfterMs: between(60_000, 150_000),
            runId: root.runId,
            operationId,
            detail: { environment: "preview-payments" },
          });
          log(`preview reservation ${jobId} requested from deploy-sim (${mode})`);
          for (;;) {
            const j = await ctx.sim.getJob(jobId);
            if (j.state === "committed") {
              await job.recordEffect({
                providerOperationId: `deploy-${jobId}`,
                committedAt: j.committedAt ?? undefined,
                detail: { environment: "preview-payments", reservation_for_run: root.runId },
              });
              return jobId;
            }
            if (j.state === "cancelled") throw new Error("the provider cancelled the reservation");
            await pause(2000, job.signal);
            if (job.signal.aborted) throw job.signal.reason;
          }
        },
        { signal: ctx.signal },
      );
      break;
    } catch (err) {
      if (ctx.signal.aborted) return;
      if (!isTransient(err)) {
        log(`preview ${jobId} not run: ${(err as Error).message}`);
        return;
      }
      // Not admitted and not run (control plane unreachable): ask again later, like any agent.
      ctx.outage.failed(err);
      await pause(wait, ctx.signal);
      wait = Math.min(wait * 2, 30_000);
    }
  }
  log(`preview ${jobId}: ${out.status}${"reason" in out ? ` (${out.reason})` : ""}`);
}
