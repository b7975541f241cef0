// Fleet stop (docs/fleet-stop.md): a kill scope over every run whose task matches, committed while a
// producer keeps registering new matching runs and asking the gate for each. After the scope's commit
// no call of any matching run — old or created during the stop — may be allowed; every tree gets its
// barrier, and the fleet receipt is stopped_and_quiet only because every barrier's receipt is.
import { randomBytes } from "node:crypto";
import { answered, check, drillCase, label, links, waitFor, waitForFleetReceipt } from "../support";
import type { StopView } from "../../schemas/stops";

const BEFORE = 4;

export const fleetStopDuringCreation = drillCase("fleet_stop_with_runs_created_during_the_stop", "004", "deny_killed", {
  summary:
    "a kill scope by task prefix while new matching runs keep being created: every call after the commit is denied killed (new runs too), one barrier per tree, and a stopped_and_quiet fleet receipt",
  async run(ctx, { agent }) {
    const prefix = `${ctx.tag}-fleet-${randomBytes(3).toString("hex")}-`;
    const mk = (i: number) =>
      agent.createRun({ taskId: `${prefix}${i}`, title: `fleet member ${i}`, ...(ctx.markDrill ? { drill: true } : {}) } as never);
    // An allowed call finishes at once (a quick read-only call): what is in flight at the stop is then
    // only what the race itself leaves, and every barrier can settle it from the executor's report.
    const ask = async (r: { runId: string; leaseId: string; epoch: number }, n: string) => {
      const operationId = `${ctx.tag}.fleet.${n}.${randomBytes(4).toString("hex")}`;
      const a = await agent.gate({ runId: r.runId, leaseId: r.leaseId, epoch: r.epoch, operationId, tool: "repo.read" });
      if (a.decision === "allow") await agent.complete(operationId, { outcome: "succeeded" }).catch(() => undefined);
      return a;
    };
    const before = [];
    for (let i = 0; i < BEFORE; i++) before.push(await mk(i));
    const allowedBefore = (await Promise.all(before.map((r, i) => ask(r, `before-${i}`)))).filter((a) => a.decision === "allow").length;

    // The producer: registers a matching run and asks the gate for it, over and over, across the stop.
    let stopping = false,
      n = BEFORE;
    const made: { t0: number; runId: string; decision: string; reason: string }[] = [];
    const producer = (async () => {
      while (!stopping) {
        const t0 = Date.now();
        const r = await mk(n++);
        const a = await ask(r, `during-${n}`);
        made.push({ t0, runId: r.runId, decision: a.decision, reason: a.reason });
      }
    })();
    await waitFor("the producer to make runs", async () => made.length >= 2, 30_000, 20);
    const stop = (await ctx.operator.createStop({
      action: "kill",
      filter: { taskPrefix: prefix },
      reason: "drill: fleet stop while runs are being created",
    })) as StopView;
    const committed = Date.now();
    await waitFor("the producer to make runs after the stop", async () => made.filter((m) => m.t0 > committed).length >= 3, 30_000, 20);
    stopping = true;
    await producer;

    const after = made.filter((m) => m.t0 > committed);
    const oldAgain = await Promise.all(before.map((r, i) => ask(r, `after-${i}`)));
    const done = await waitForFleetReceipt(ctx, stop.stopId);
    const checks = [
      check("the matching runs were allowed before the stop", allowedBefore === BEFORE, allowedBefore),
      check(
        "every call of a run created after the scope committed is denied killed",
        after.length > 0 && after.every((m) => answered(m, "deny", "killed")),
        after,
      ),
      check(
        "every call of a run from before the stop is denied",
        oldAgain.every((a) => a.decision === "deny"),
        oldAgain.map((a) => label(a.decision, a.reason)),
      ),
      check("the scope matched every run existing at its commit (at least those made before it)", stop.matched >= BEFORE + 2, stop.matched),
      check(
        "one barrier per tree, all complete",
        done.barriers.total === stop.matched && done.barriers.complete === done.barriers.total,
        done.barriers,
      ),
      check(
        "the fleet receipt is stopped_and_quiet and every run's receipt is",
        done.receipt!.decision === "stopped_and_quiet" && done.runs.every((r) => r.decision === "stopped_and_quiet"),
        done.receipt!.decision,
      ),
    ];
    const first = after[0];
    return {
      observed: first ? label(first.decision, first.reason) : "no_run_created_after_the_stop",
      checks,
      evidence: [...links(ctx, {}), { label: "fleet stop", url: `${ctx.baseUrl}/stops/${stop.stopId}` }],
      facts: {
        stopId: stop.stopId,
        matched: stop.matched,
        createdDuring: made.length,
        createdAfterCommit: after.length,
        fleetDigest: done.receipt!.digest,
      },
    };
  },
});
