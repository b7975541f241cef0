// Saved views of the runs list (docs/console.md#saved-views): a member's named query strings, private to
// that member in that team. Any member who may read runs may keep views (a view reads, it changes
// nothing); creating and deleting one is audited. The query is stored normalized: known filters only,
// no cursor, so a saved view never smuggles anything the list would not accept from a URL.
import "server-only";
import { prisma } from "../../../platform/db/prisma";
import { newId } from "../../../platform/ids";
import { QuiesceError, badRequest, forbidden, notFound } from "../../../platform/errors";
import { viewQueryString } from "../../../schemas/runs-list";
import { authorize } from "../../../platform/auth/authorize";
import { actorOf, type Principal } from "../../../platform/auth/principal";
import { appendAudit } from "../../audit/audit";

export const MAX_SAVED_VIEWS = 50;

export interface SavedView {
  id: string;
  name: string;
  /** the runs list's query string, e.g. "status=paused&harness=codex" */
  query: string;
  createdAt: string;
}

function member(p: Principal): { teamId: string; userId: string } {
  if (p.type !== "user") throw forbidden("saved views belong to a signed-in member");
  return { teamId: p.teamId, userId: p.userId };
}

export async function listSavedViews(p: Principal): Promise<SavedView[]> {
  authorize(p, "run.read");
  const { teamId, userId } = member(p);
  const rows = await prisma().savedView.findMany({ where: { teamId, userId }, orderBy: [{ name: "asc" }], take: MAX_SAVED_VIEWS });
  return rows.map((v) => ({ id: v.id, name: v.name, query: v.query, createdAt: v.createdAt.toISOString() }));
}

export async function createSavedView(p: Principal, input: { name: string; query: string }): Promise<SavedView> {
  authorize(p, "run.read");
  const { teamId, userId } = member(p);
  const name = input.name.trim();
  if (!name) throw badRequest("name: a name is required");
  const query = viewQueryString(new URLSearchParams(input.query.replace(/^\?/, "")));
  return prisma().$transaction(async (tx) => {
    // One member's views are written one at a time, so the count and the name check hold.
    await tx.$executeRawUnsafe("SELECT pg_advisory_xact_lock(hashtextextended($1, 3))", `views:${teamId}:${userId}`);
    if ((await tx.savedView.count({ where: { teamId, userId } })) >= MAX_SAVED_VIEWS) {
      throw new QuiesceError("conflict", `you already keep ${MAX_SAVED_VIEWS} views: delete one first`);
    }
    if (await tx.savedView.findUnique({ where: { teamId_userId_name: { teamId, userId, name } } })) {
      throw new QuiesceError("conflict", `name: you already have a view called "${name}"`);
    }
    const v = await tx.savedView.create({ data: { id: newId("view"), teamId, userId, name, query } });
    await appendAudit(tx, { teamId, actor: actorOf(p), action: "view.create", target: v.id, after: { name, query } });
    return { id: v.id, name: v.name, query: v.query, createdAt: v.createdAt.toISOString() };
  });
}

/** Deletes one of the caller's own views; another member's (or another team's) view is "not found". */
export async function deleteSavedView(p: Principal, viewId: string): Promise<void> {
  authorize(p, "run.read");
  const { teamId, userId } = member(p);
  await prisma().$transaction(async (tx) => {
    const v = await tx.savedView.findUnique({ where: { id: viewId } });
    if (!v || v.teamId !== teamId || v.userId !== userId) throw notFound("saved view");
    await tx.savedView.delete({ where: { id: viewId } });
    await appendAudit(tx, { teamId, actor: actorOf(p), action: "view.delete", target: viewId, before: { name: v.name, query: v.query } });
  });
}
