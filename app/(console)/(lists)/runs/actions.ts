"use server";
// Saved views of the runs list. Each goes through runAction: zod → member from the database → role
// check → dal (which keeps a view to its owner and team, normalizes the query and audits) → revalidate.
import { runAction } from "@/lib/actions/run-action";
import { SavedViewCreateInput, SavedViewDeleteInput } from "@/lib/schemas/console";
import { createSavedView, deleteSavedView } from "@/lib/dal/console/saved-views";

export async function createSavedViewAction(raw: unknown) {
  return runAction(
    { name: "view.create", input: SavedViewCreateInput, action: "run.read", revalidate: () => ["/runs"] },
    raw,
    ({ session, input }) => createSavedView(session.principal, input),
  );
}

export async function deleteSavedViewAction(raw: unknown) {
  return runAction(
    { name: "view.delete", input: SavedViewDeleteInput, action: "run.read", revalidate: () => ["/runs"] },
    raw,
    async ({ session, input }) => {
      await deleteSavedView(session.principal, input.viewId);
      return { viewId: input.viewId };
    },
  );
}
