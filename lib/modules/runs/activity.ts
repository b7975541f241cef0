// Run activity for other modules' reads (docs/console.md#run-activity): a stop's dry run says how many of
// the runs it covers are working now, judged by the same rule and the same SQL facts as the runs list.
import "server-only";
import { authorize } from "../../platform/auth/authorize";
import type { Principal } from "../../platform/auth/principal";
import { readActivity } from "./internal/activity-sql";
import { teamFor } from "./internal/team";

/** How many of these runs of the team are working now (calls in flight, or a gate call within the minute). */
export async function countWorkingRuns(p: Principal, teamId: string, runIds: readonly string[]): Promise<number> {
  authorize(p, "run.read");
  if (runIds.length === 0) return 0;
  const activity = await readActivity(teamFor(p, teamId), runIds, Date.now());
  let n = 0;
  for (const a of activity.values()) if (a.activity === "working") n++;
  return n;
}
