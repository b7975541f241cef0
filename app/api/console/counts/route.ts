import { consoleGet } from "@/lib/actions/console-route";
import { navCounts } from "@/lib/actions/nav-counts";

export const dynamic = "force-dynamic";

// The navigation's badges (approvals waiting, open work), polled by the header so they move while a page stays open.
export const GET = consoleGet<Record<string, never>>(async ({ session }) => navCounts(session.principal));
