import { consoleGet } from "@/lib/actions/console-route";
import { runsView } from "@/lib/dal/console/views";
import { RunsQuery } from "@/lib/schemas/console";
import { badRequest } from "@/lib/errors";

export const dynamic = "force-dynamic";

export const GET = consoleGet<Record<string, never>>(async ({ session, url }) => {
  const q = RunsQuery.safeParse(Object.fromEntries(url.searchParams));
  if (!q.success) throw badRequest(`${q.error.issues[0]?.path.join(".") || "query"}: ${q.error.issues[0]?.message}`);
  return runsView(session.principal, { ...q.data, rootsOnly: q.data.roots });
});
