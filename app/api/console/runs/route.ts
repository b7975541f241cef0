import { consoleGet } from "@/lib/actions/console-route";
import { runsView } from "@/lib/modules/runs";
import { parseRunsQuery } from "@/lib/schemas/runs-list";
import { RunsApiExtra } from "@/lib/schemas/console";
import { badRequest } from "@/lib/platform/errors";

export const dynamic = "force-dynamic";

// The runs list's JSON (what the page polls): the list's URL parameters read leniently, as the page
// reads them (a bad one is ignored and named in `ignored`); `parent` and `pageSize` (an expanded row's
// children) are this endpoint's own and must be valid.
export const GET = consoleGet<Record<string, never>>(async ({ session, url }) => {
  const extra = RunsApiExtra.safeParse(Object.fromEntries(url.searchParams));
  if (!extra.success) throw badRequest(`${extra.error.issues[0]?.path.join(".") || "query"}: ${extra.error.issues[0]?.message}`);
  return runsView(session.principal, parseRunsQuery(url.searchParams), {
    parentRunId: extra.data.parent,
    pageSize: extra.data.pageSize,
  });
});
