"use server";
// Run controls. Each goes through runAction: zod → member from the database → role check → dal
// (which checks the team, takes the tree lock, writes the audit row and notifies) → revalidate.
import { serverAction } from "@/lib/actions/run-action";
import { BreakerControlInput, RunControlInput } from "@/lib/schemas/console";
import { pauseRun, resumeRun } from "@/lib/modules/runs";
import { setBreaker } from "@/lib/modules/gate";
import { killRun, restartRun } from "@/lib/modules/stop";

const runPaths = (i: { runId: string }) => [`/runs/${i.runId}`, "/runs"];

export const pauseRunAction = serverAction(
  { name: "pause", input: RunControlInput, action: "run.pause", revalidate: runPaths },
  async ({ session, input }) => {
    const r = await pauseRun(session.principal, input.runId, input.reason);
    return { lifecycle: r.lifecycle as string };
  },
);

export const resumeRunAction = serverAction(
  { name: "resume", input: RunControlInput, action: "run.resume", revalidate: runPaths },
  async ({ session, input }) => {
    const r = await resumeRun(session.principal, input.runId, input.reason);
    return { lifecycle: r.lifecycle as string };
  },
);

export const killRunAction = serverAction(
  { name: "kill", input: RunControlInput, action: "run.kill", revalidate: runPaths },
  async ({ session, input }) => {
    const r = await killRun(session.principal, input.runId, input.reason);
    return { barrierId: r.barrierId, created: r.created };
  },
);

export const breakerAction = serverAction(
  {
    name: "breaker",
    input: BreakerControlInput,
    action: (i) => (i.action === "trip" ? "breaker.trip" : "breaker.reset"),
    revalidate: runPaths,
  },
  async ({ session, input }) => {
    const r = await setBreaker(session.principal, input.runId, input.action, input.reason);
    return { breaker: r.breaker as string };
  },
);

export const restartRunAction = serverAction(
  { name: "restart", input: RunControlInput, action: "run.resume", revalidate: runPaths },
  async ({ session, input }) => {
    const r = await restartRun(session.principal, input.runId, input.reason);
    return { runId: r.runId };
  },
);
