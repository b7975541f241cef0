import { consoleGet } from "@/lib/actions/console-route";
import { listApprovals } from "@/lib/modules/approvals";

export const dynamic = "force-dynamic";

// The approvals page's JSON (what it polls): the API's list, read with the member's session. The module parses
// the query (state, limit) and answers 400 naming the field.
export const GET = consoleGet<Record<string, never>>(async ({ session, url }) => ({
  approvals: await listApprovals(session.principal, Object.fromEntries(url.searchParams)),
}));
