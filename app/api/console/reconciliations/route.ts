import { consoleGet } from "@/lib/actions/console-route";
import { reconciliationsView } from "@/lib/modules/runs";
import { ReconciliationsQuery } from "@/lib/schemas/console";
import { badRequest } from "@/lib/platform/errors";

export const dynamic = "force-dynamic";

export const GET = consoleGet<Record<string, never>>(async ({ session, url }) => {
  const q = ReconciliationsQuery.safeParse(Object.fromEntries(url.searchParams));
  if (!q.success) throw badRequest(`${q.error.issues[0]?.path.join(".") || "query"}: ${q.error.issues[0]?.message}`);
  return reconciliationsView(session.principal, q.data);
});
