// The environment (docs/evidence.md#the-environment): a run that never ran under `quiesce exec` has no
// supervisor, so its stop receipt may say nothing about its processes — not "terminated", not "empty" —
// and says so in words; no environment rung appears on its ladder.
import { barrierView, check, drillCase, links, newRun, waitForReceipt } from "../support";

const SENTENCE = "environment not observed: this run had no supervisor; nothing is claimed about its processes";

export const unsupervisedRunClaimsNothing = drillCase("unsupervised_run_claims_nothing_about_processes", "000", "nothing_claimed", {
  summary:
    "a run registered through the SDK, with no supervisor, is killed: its receipt's environment entry says 'environment not observed … nothing is claimed about its processes', the ladder has no environment rung, and no sentence says its environment terminated",
  async run(ctx) {
    const run = await newRun(ctx, { title: "an agent without a supervisor" });
    const { barrierId } = await ctx.operator.kill(run.runId, "drill: unsupervised run");
    const receipt = (await waitForReceipt(ctx, ctx.operator, barrierId)) as Record<string, unknown> & {
      environment?: { run_id: string; supervised: boolean; statement: string }[];
      summary?: string[];
    };
    const view = await barrierView(ctx.operator, barrierId);
    const entry = receipt.environment?.find((e) => e.run_id === run.runId);
    const text = (receipt.summary ?? []).join("\n");
    const checks = [
      check("the receipt has an environment entry for the run", !!entry, receipt.environment),
      check("it says the run was not supervised", entry?.supervised === false, entry),
      check("it claims nothing about the run's processes", entry?.statement === SENTENCE, entry?.statement),
      check("the summary says nothing is claimed", /nothing is claimed about its processes/.test(text), receipt.summary),
      check(
        "no sentence says the environment terminated or is empty",
        !/environment terminated|container .* empty/.test(text),
        receipt.summary,
      ),
      check("no environment rung on the ladder", !("environment_terminated" in view.ladder), Object.keys(view.ladder)),
    ];
    return {
      observed: checks.every((c) => c.ok)
        ? "nothing_claimed"
        : `failed: ${checks
            .filter((c) => !c.ok)
            .map((c) => c.name)
            .join("; ")}`,
      checks,
      evidence: links(ctx, { runId: run.runId, barrierId }),
      facts: { environment: receipt.environment, summary: receipt.summary },
    };
  },
});
