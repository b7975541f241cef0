"use server";
// Fleet stop from the console (docs/fleet-stop.md): through runAction like every control write. The
// whole team (an empty filter) needs the team's name typed back; the dal authorizes and audits again.
import { serverAction } from "@/lib/actions/run-action";
import { FleetStopInput, LiftStopInput } from "@/lib/schemas/console";
import { createStop, previewStop, resumeStop } from "@/lib/modules/stop";
import { isWholeTeam } from "@/lib/control/fleet";
import { toFilter } from "@/lib/modules/stop";
import { QuiesceError } from "@/lib/platform/errors";

export const fleetStopAction = serverAction(
  { name: "fleet-stop", input: FleetStopInput, action: "fleet.stop", revalidate: ["/runs"] },
  async ({ session, input }) => {
    const body = { action: input.action, filter: input.filter, reason: input.reason, dryRun: input.dryRun };
    if (input.dryRun) {
      const r = await previewStop(session.principal, body);
      return { dryRun: true as const, matched: r.matched, barrierTargets: r.barrierTargets, working: r.working, stopId: null };
    }
    if (isWholeTeam(toFilter(input.filter)) && input.confirmTeam?.trim() !== session.team.name) {
      throw new QuiesceError("bad_request", `confirmTeam: type the team's name ("${session.team.name}") to stop every run of the team`);
    }
    const r = await createStop(session.principal, body);
    return { dryRun: false as const, matched: r.matched, barrierTargets: r.barriers.total, working: null, stopId: r.stopId };
  },
);

/** Lifts a pause scope (a kill scope is for good: the dal answers 409). */
export const liftStopAction = serverAction(
  { name: "lift-stop", input: LiftStopInput, action: "fleet.stop", revalidate: ["/runs", "/stops"] },
  async ({ session, input }) => {
    const r = await resumeStop(session.principal, input.stopId, input.reason);
    return { liftedAt: r.liftedAt };
  },
);
