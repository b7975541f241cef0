import { consoleGet } from "@/lib/actions/console-route";
import { barrierView } from "@/lib/modules/runs";

export const dynamic = "force-dynamic";

export const GET = consoleGet<{ barrierId: string }>(async ({ session, params }) => barrierView(session.principal, params.barrierId));
