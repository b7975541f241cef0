import { consoleGet } from "@/lib/actions/console-route";
import { openWorkView } from "@/lib/modules/runs";
import { OpenWorkQuery } from "@/lib/schemas/console";
import { badRequest } from "@/lib/platform/errors";

export const dynamic = "force-dynamic";

// The open-work page polls this: the same view its server render returns (lib/modules/runs/console/views.ts).
export const GET = consoleGet<Record<string, never>>(async ({ session, url }) => {
  const q = OpenWorkQuery.safeParse(Object.fromEntries(url.searchParams));
  if (!q.success) throw badRequest(`${q.error.issues[0]?.path.join(".") || "query"}: ${q.error.issues[0]?.message}`);
  return openWorkView(session.principal, q.data);
});
