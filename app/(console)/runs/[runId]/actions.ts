"use server";
// Run controls. Each goes through runAction: zod → member from the database → role check → dal
// (which checks the team, takes the tree lock, writes the audit row and notifies) → revalidate.
import { runAction } from "@/lib/actions/run-action";
import { BreakerControlInput, RunControlInput } from "@/lib/schemas/console";
import { pauseRun, resumeRun } from "@/lib/modules/runs";
import { setBreaker } from "@/lib/modules/gate";
import { killRun } from "@/lib/modules/stop";

const runPaths = (i: { runId: string }) => [`/runs/${i.runId}`, "/runs"];

export async function pauseRunAction(raw: unknown) {
  return runAction(
    { name: "pause", input: RunControlInput, action: "run.pause", revalidate: runPaths },
    raw,
    async ({ session, input }) => {
      const r = await pauseRun(session.principal, input.runId, input.reason);
      return { lifecycle: r.lifecycle as string };
    },
  );
}

export async function resumeRunAction(raw: unknown) {
  return runAction(
    { name: "resume", input: RunControlInput, action: "run.resume", revalidate: runPaths },
    raw,
    async ({ session, input }) => {
      const r = await resumeRun(session.principal, input.runId, input.reason);
      return { lifecycle: r.lifecycle as string };
    },
  );
}

export async function killRunAction(raw: unknown) {
  return runAction({ name: "kill", input: RunControlInput, action: "run.kill", revalidate: runPaths }, raw, async ({ session, input }) => {
    const r = await killRun(session.principal, input.runId, input.reason);
    return { barrierId: r.barrierId, created: r.created };
  });
}

export async function breakerAction(raw: unknown) {
  return runAction(
    {
      name: "breaker",
      input: BreakerControlInput,
      action: (i) => (i.action === "trip" ? "breaker.trip" : "breaker.reset"),
      revalidate: runPaths,
    },
    raw,
    async ({ session, input }) => {
      const r = await setBreaker(session.principal, input.runId, input.action, input.reason);
      return { breaker: r.breaker as string };
    },
  );
}
