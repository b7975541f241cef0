// Seed 004: "Unauthorized interrupt. Confirm an operator without the right permission cannot pause
// someone else's workflow." Machine keys can read and ask, never write control state; a viewer may
// not act; another team's operator gets "not found", exactly as for a run that does not exist.
import { QuiesceClient } from "../../agent/sdk/client";
import { check, drillCase, links, newRun, statusOf } from "../support";

export const unauthorizedInterrupt = drillCase("unauthorized_interrupt", "004", "refused", {
  summary:
    "the agent's own key, an unknown key, a viewer and another team's operator try to pause / kill / trip a run: all refused (403 / 401 / 404 as for a missing run) and nothing changes",
  async run(ctx, { agent }) {
    const run = await newRun(ctx, { title: "someone else's incident response" });
    const before = await ctx.operator.getRun(run.runId);
    const auditBefore = ctx.db ? await ctx.db.auditCount(run.runId) : null;
    const stranger = new QuiesceClient({ url: ctx.baseUrl, apiKey: "qk_this_is_not_a_key", timeoutMs: 15_000 });
    const attempts: { who: string; action: string; want: number; got: number | "ok" | "unreachable" }[] = [];
    const attempt = async (who: string, action: string, want: number, p: Promise<unknown>) => {
      attempts.push({ who, action, want, got: await statusOf(p) });
    };
    await attempt("agent key", "pause", 403, agent.pause(run.runId, "I am the agent"));
    await attempt("agent key", "kill", 403, agent.kill(run.runId, "I am the agent"));
    await attempt("agent key", "breaker trip", 403, agent.breaker(run.runId, "trip", "I am the agent"));
    await attempt("unknown key", "pause", 401, stranger.pause(run.runId, "who am I"));
    if (ctx.viewer) await attempt("viewer", "pause", 403, ctx.viewer.pause(run.runId, "viewer"));
    if (ctx.viewer) await attempt("viewer", "kill", 403, ctx.viewer.kill(run.runId, "viewer"));
    let sameAsMissing: boolean | null = null;
    if (ctx.otherTeam) {
      await attempt("another team's operator", "kill", 404, ctx.otherTeam.kill(run.runId, "stop their incident response"));
      await attempt("another team's operator", "pause", 404, ctx.otherTeam.pause(run.runId, "stop their incident response"));
      const theirs = await ctx.otherTeam.pause(run.runId, "x").catch((e: Error) => e.message);
      const missing = await ctx.otherTeam.pause(`run_missing_${ctx.tag}`, "x").catch((e: Error) => e.message);
      sameAsMissing = theirs === missing;
    }
    const after = await ctx.operator.getRun(run.runId);
    const unchanged =
      after.lifecycle === before.lifecycle &&
      after.epoch === before.epoch &&
      after.breaker === before.breaker &&
      after.lifecycleChangedAt === before.lifecycleChangedAt &&
      after.breakerChangedAt === before.breakerChangedAt;
    // The right operator can (so the refusals were about permission, not a broken route).
    const mine = await ctx.operator.pause(run.runId, "drill: the run's own operator");
    await ctx.operator.resume(run.runId, "drill: done");
    const checks = [
      ...attempts.map((a) => check(`${a.who}: ${a.action} refused with ${a.want}`, a.got === a.want, a.got)),
      check("the run's control state is unchanged", unchanged, {
        before: [before.lifecycle, before.breaker, before.epoch],
        after: [after.lifecycle, after.breaker, after.epoch],
      }),
      check("the team's own operator can pause it", mine.lifecycle === "paused", mine.lifecycle),
    ];
    if (sameAsMissing !== null) checks.push(check("another team's run answers exactly like a missing one", sameAsMissing));
    if (ctx.db && auditBefore !== null) {
      const auditAfter = await ctx.db.auditCount(run.runId);
      // The operator's own pause + resume add exactly two rows; the refused attempts added none.
      checks.push(
        check("db: the refused attempts wrote no audit rows", auditAfter - auditBefore === 2, { before: auditBefore, after: auditAfter }),
      );
    }
    const refused = attempts.every((a) => a.got === a.want) && unchanged;
    return {
      observed: refused
        ? "refused"
        : `accepted: ${
            attempts
              .filter((a) => a.got !== a.want)
              .map((a) => `${a.who} ${a.action} → ${a.got}`)
              .join(", ") || "state changed"
          }`,
      checks,
      evidence: links(ctx, { runId: run.runId }),
      facts: { attempts },
    };
  },
});
