"use server";
// Saved views of the runs list. Each goes through runAction: zod → member from the database → role
// check → dal (which keeps a view to its owner and team, normalizes the query and audits) → revalidate.
import { serverAction } from "@/lib/actions/run-action";
import { MatchingRunIdsInput, SavedViewCreateInput, SavedViewDeleteInput } from "@/lib/schemas/console";
import { createSavedView, deleteSavedView } from "@/lib/modules/runs";
import { listMatchingRunIds, MATCHING_IDS_CAP } from "@/lib/modules/runs";
import { parseRunsQuery } from "@/lib/schemas/runs-list";

export const createSavedViewAction = serverAction(
  { name: "view.create", input: SavedViewCreateInput, action: "run.read", revalidate: ["/runs"] },
  ({ session, input }) => createSavedView(session.principal, input),
);

export const deleteSavedViewAction = serverAction(
  { name: "view.delete", input: SavedViewDeleteInput, action: "run.read", revalidate: ["/runs"] },
  async ({ session, input }) => {
    await deleteSavedView(session.principal, input.viewId);
    return { viewId: input.viewId };
  },
);

/**
 * "Select all N matching" when the list's filters have no stop-scope form (search, breaker): the ids of
 * every matching run now, read by the same query as the list (a parameter that does not parse is
 * ignored, as on the page). The stop then names exactly these runs (docs/console.md#runs-list).
 */
export const matchingRunIdsAction = serverAction(
  { name: "runs.matching-ids", input: MatchingRunIdsInput, action: "fleet.stop" },
  async ({ session, input }) => {
    const { roots, ...q } = parseRunsQuery(new URLSearchParams(input.query)).query;
    const r = await listMatchingRunIds(session.principal, { ...q, rootsOnly: roots === true });
    return { ...r, cap: MATCHING_IDS_CAP };
  },
);
