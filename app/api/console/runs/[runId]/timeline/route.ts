import { consoleGet } from "@/lib/actions/console-route";
import { listRunTimeline } from "@/lib/modules/runs";
import { TimelineQuery } from "@/lib/schemas/console";
import { badRequest } from "@/lib/platform/errors";

export const dynamic = "force-dynamic";

// One page of a run's event history (newest first); `cursor` is the previous page's nextCursor.
export const GET = consoleGet<{ runId: string }>(async ({ session, params, url }) => {
  const q = TimelineQuery.safeParse(Object.fromEntries(url.searchParams));
  if (!q.success) throw badRequest(`${q.error.issues[0]?.path.join(".") || "query"}: ${q.error.issues[0]?.message}`);
  return listRunTimeline(session.principal, params.runId, q.data);
});
